/**
 * The ledger's events (specification, "Events"). Every event carries `message_id`, the
 * angle-bracketed Message-ID of the send, or `-` when no send is under way.
 */
export type LedgerEvent =
  | {
      event: "received";
      message_id: string;
      from: string;
      from_domain: string;
      rcpt_count: number;
      subject_len: number;
      body_bytes: number;
      /** The sender's labels of a `/send` message, when it gave them (kept for its status). */
      tags?: readonly string[];
      metadata?: Readonly<Record<string, string>>;
    }
  | {
      event: "rejected";
      message_id: string;
      reason: string;
      /** The HTTP status answered; for an SMTP rejection, the SMTP reply code instead. */
      http_status?: number;
      smtp_code?: number;
    }
  | { event: "signed"; message_id: string; domain: string; selector: string }
  | { event: "mx_resolved"; message_id: string; rcpt: string; mx_hosts: string[] }
  | { event: "attempt"; message_id: string; rcpt: string; host: string; attempt: number }
  | {
      event: "delivered";
      message_id: string;
      rcpt: string;
      host: string;
      attempt: number;
      tls: boolean;
      smtp_response: string;
    }
  | {
      event: "deferred";
      message_id: string;
      rcpt: string;
      host: string;
      tls: boolean;
      error: string;
      next_wait_s: number;
    }
  | { event: "failed"; message_id: string; rcpt: string; permanent: boolean; error: string }
  | {
      /**
       * A recipient on the sending client's suppression list: not attempted. `message_id` is
       * `-` for an SMTP RCPT TO refused before the message exists.
       */
      event: "suppressed";
      message_id: string;
      rcpt: string;
      /** The sending client; null for `/send` on an open instance. */
      client_id: string | null;
      reason: string;
    };

/** `message_id` of a `rejected` event that happens before a send exists. */
export const NO_MESSAGE_ID = "-";
