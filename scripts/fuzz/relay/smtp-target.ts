import type { FuzzInput, Outcome, Target } from "../campaign-types.js";
import { hostileString } from "../hostile-values.js";
import type { Prng } from "../prng.js";
import { type SmtpStep, smtpSession } from "../raw-smtp.js";
import { rawMessage } from "./mime-inputs.js";

// SMTP submission sessions as raw command sequences: EHLO variants, AUTH garbage and real
// credentials, envelope parameters, DATA with mutated messages and terminators, command soup.

export interface SmtpContext {
  smtpPort: number;
  clientId: string;
  secret: string;
  senderDomain: string;
  sinkDomain: string;
}

/** The relay's local-failure reply: the SMTP form of a 500 (decisions, "SMTP submission"). */
const LOCAL_FAILURE = /^451 4\.3\.0/m;

const line = (text: string, ending = "\r\n") => Buffer.from(`${text}${ending}`, "latin1");
const command = (text: string): SmtpStep => ({ send: line(text), awaitReply: true });

function authSteps(context: SmtpContext, random: Prng): SmtpStep[] {
  const plain = (user: string, secret: string) =>
    Buffer.from(`\0${user}\0${secret}`, "latin1").toString("base64");
  return random.pick([
    () => [command(`AUTH PLAIN ${plain(context.clientId, context.secret)}`)],
    () => [command(`AUTH PLAIN ${plain(context.clientId, context.secret)}`)],
    () => [
      command("AUTH LOGIN"),
      command(Buffer.from(context.clientId).toString("base64")),
      command(Buffer.from(context.secret).toString("base64")),
    ],
    () => [command(`AUTH PLAIN ${plain(context.clientId, random.hex(48))}`)],
    () => [
      command(
        `AUTH PLAIN ${random.pick(["", "=", "!!!!", "AAAA", "*", Buffer.from(hostileString(random, 3000)).toString("base64")])}`,
      ),
    ],
    () => [
      command("AUTH PLAIN"),
      command(
        random.pick([
          "*",
          "",
          "%%%",
          Buffer.from(`${hostileString(random, 200)}\0\0\0`).toString("base64"),
        ]),
      ),
    ],
    () => [
      command("AUTH LOGIN"),
      command(
        random.pick([
          "*",
          "not base64",
          Buffer.from(hostileString(random, 5000)).toString("base64"),
        ]),
      ),
      command("x"),
    ],
    () => [
      command(
        `AUTH ${random.pick(["CRAM-MD5", "XOAUTH2 abc", "GSSAPI", "plain", "PLAIN PLAIN PLAIN", `PLAIN ${"A".repeat(random.size(100_000))}`])}`,
      ),
    ],
    () =>
      Array.from({ length: random.between(2, 12) }, () =>
        command(`AUTH PLAIN ${plain(context.clientId, random.hex(48))}`),
      ),
    () => [],
  ])();
}

function dataSteps(
  context: SmtpContext,
  to: string[],
  random: Prng,
): { steps: SmtpStep[]; summary: string } {
  const message = rawMessage({ from: `fuzz@${context.senderDomain}`, to }, random);
  const stuffed = random.chance(0.85) ? message.text.replace(/^\./gm, "..") : message.text;
  const body = Buffer.from(stuffed, random.chance(0.8) ? "utf8" : "latin1");
  const ending = random.pick([
    "\r\n.\r\n",
    "\r\n.\r\n",
    "\r\n.\r\n",
    "\n.\n",
    "\r\n.\n",
    ".\r\n",
    "\r\n",
  ]);
  const proper = ending === "\r\n.\r\n";
  return {
    summary: `DATA ${message.summary}${proper ? "" : ` ended ${JSON.stringify(ending)}`}`,
    steps: [
      command("DATA"),
      // A non-standard terminator may or may not end the message: a proper one follows (awaited).
      {
        send: Buffer.concat([
          body,
          Buffer.from(
            message.text.endsWith("\r\n") ? ending.replace(/^\r\n/, "") : ending,
            "latin1",
          ),
        ]),
        awaitReply: proper,
      },
      ...(proper ? [] : [command(".")]),
    ],
  };
}

function mailFrom(context: SmtpContext, random: Prng): string {
  const address = random.chance(0.85)
    ? `fuzz@${context.senderDomain}`
    : random.pick(["", "x@other.test", "a@b@c", hostileString(random, 600).replace(/[\r\n]/g, "")]);
  const params = random.chance(0.7)
    ? ""
    : ` ${random.pick(["SIZE=99999999999999", "SIZE=-1", "SIZE=abc", "BODY=8BITMIME", "BODY=BINARYMIME", "SMTPUTF8", "X=Y", "AUTH=<>", "RET=FULL ENVID=x", `SIZE=${random.size(10_000_000)}`])}`;
  return `MAIL FROM:<${address}>${params}`;
}

function soup(random: Prng): SmtpStep[] {
  const verbs = [
    "NOOP",
    "RSET",
    "VRFY x",
    "EXPN list",
    "HELP",
    "ETRN x",
    "TURN",
    "BDAT 10 LAST",
    "STARTTLS extra",
    "HELO",
    "EHLO",
    "MAIL",
    "RCPT",
    "DATA",
    "QUIT",
    "mail from:<x@y>",
    "",
  ];
  return Array.from({ length: random.between(1, 25) }, () => {
    const text = random.chance(0.8)
      ? random.pick(verbs)
      : hostileString(random, 20_000).replace(/\r\n/g, " ");
    return random.chance(0.2)
      ? { send: line(text, random.pick(["\n", "\r", "", "\r\n\r\n"])), awaitReply: false }
      : command(text);
  });
}

export function smtpTarget(context: SmtpContext): Target {
  return {
    name: "smtp",
    generate(random): FuzzInput {
      const steps: SmtpStep[] = [];
      const parts: string[] = [];
      const hello = random.chance(0.85)
        ? random.pick(["EHLO fuzz.test", "HELO fuzz.test"])
        : random.pick([
            "EHLO",
            `EHLO ${hostileString(random, 2000).replace(/[\r\n]/g, "")}`,
            "LHLO x",
          ]);
      steps.push(command(hello));
      if (random.chance(0.05)) {
        // STARTTLS then bytes that are not a TLS handshake.
        steps.push(command("STARTTLS"), {
          send: random.bytes(random.size(2000)),
          awaitReply: false,
        });
        parts.push("STARTTLS + garbage");
      } else if (random.chance(0.15)) {
        steps.push(...soup(random));
        parts.push("command soup");
      } else {
        steps.push(...authSteps(context, random));
        const to = Array.from(
          { length: random.chance(0.9) ? random.between(1, 3) : random.size(300) },
          (_, i) =>
            random.chance(0.9)
              ? `rcpt${i}@${context.sinkDomain}`
              : hostileString(random, 300).replace(/[\r\n]/g, ""),
        );
        const envelope = [
          command(mailFrom(context, random)),
          ...to.map((address) => command(`RCPT TO:<${address}>`)),
        ];
        // Pipelined envelope: every command in one write, only the last reply awaited.
        if (random.chance(0.2)) {
          steps.push({ send: Buffer.concat(envelope.map((step) => step.send)), awaitReply: true });
        } else {
          steps.push(...envelope);
        }
        const data = dataSteps(context, to.slice(0, 5), random);
        steps.push(...data.steps);
        if (random.chance(0.3)) steps.push(command("RSET"), ...data.steps.slice(0, 2));
        parts.push(data.summary);
      }
      steps.push(command("QUIT"));
      return {
        summary: `${hello.slice(0, 30)}; ${parts.join("; ")}`,
        reproduction: {
          kind: "smtp",
          steps: steps.map((step) => ({ send: step.send, await_reply: step.awaitReply })),
        },
        async run(): Promise<Outcome> {
          const outcome = await smtpSession(context.smtpPort, steps);
          const failure = LOCAL_FAILURE.exec(outcome.transcript);
          return {
            status: `smtp ${outcome.status}`,
            serverError: failure !== null,
            hung: outcome.hung,
            ms: outcome.ms,
            detail: failure
              ? outcome.transcript.slice(failure.index, failure.index + 300)
              : outcome.transcript.slice(-2000),
          };
        },
      };
    },
  };
}
