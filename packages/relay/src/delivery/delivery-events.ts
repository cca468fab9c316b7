/** The ledger events outbound delivery emits (specification, "Events"), correlated by `message_id`. */
export type DeliveryEvent =
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
  | { event: "failed"; message_id: string; rcpt: string; permanent: boolean; error: string };
