import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { mailboxListField, unstructuredField } from "./header-encoding.js";

const lines = (field: string) => field.split("\r\n");

/** Reads a field back as a mail reader does. */
async function decoded(field: string) {
  return simpleParser(`${field}\r\n\r\n`);
}

// Texts that cannot be folded at spaces within 78 characters, or that are not printable ASCII.
const CLASS = [
  ["a long ASCII word", "x".repeat(2000)],
  ["a long dotted word", "a.".repeat(1000)],
  ["a long run of spaces", `a${" ".repeat(300)}b`],
  ["words just over a line", `${"y".repeat(77)} ${"z".repeat(77)}`],
  ["UTF-8 text", "Relatório — ação ✓ 日本語 😀".repeat(40)],
  ["something that looks like an encoded word", "=?UTF-8?B?eA==?= literally"],
] as const;

describe("unstructuredField", () => {
  it("keeps short printable ASCII as it is, folded at spaces", () => {
    expect(unstructuredField("Subject", "Hello  world")).toBe("Subject: Hello  world");
    const long = unstructuredField("Subject", "word ".repeat(40).trim());
    expect(lines(long).length).toBeGreaterThan(1);
    expect(lines(long).every((line) => line.length <= 78)).toBe(true);
  });

  it.each(CLASS)("writes %s within 78-character lines that decode back", async (_case, text) => {
    const field = unstructuredField("Subject", text);
    expect(lines(field).every((line) => line.length <= 78 && line.trim() !== "")).toBe(true);
    expect(field).toMatch(/^[\x20-\x7e\r\n]*$/);
    expect((await decoded(field)).subject).toBe(text);
  });

  it("turns line breaks into spaces, so a value cannot add a header", () => {
    expect(unstructuredField("Subject", "hi\r\nBcc: evil@x.test")).toBe(
      "Subject: hi Bcc: evil@x.test",
    );
  });
});

describe("mailboxListField", () => {
  it("writes atoms as they are and quotes other printable names", () => {
    expect(
      mailboxListField("To", [
        { address: "a@x.test" },
        { name: "Ana Lima", address: "b@x.test" },
        { name: 'Ana "A." Lima', address: "c@x.test" },
      ]),
    ).toBe('To: a@x.test, Ana Lima <b@x.test>, "Ana \\"A.\\" Lima" <c@x.test>');
  });

  it.each(CLASS)(
    "writes a display name with %s within 78-character lines that decode back",
    async (_case, name) => {
      const field = mailboxListField("From", [{ name, address: "a@x.test" }]);
      expect(lines(field).every((line) => line.length <= 78 && line.trim() !== "")).toBe(true);
      expect((await decoded(field)).from?.value).toEqual([{ name, address: "a@x.test" }]);
    },
  );
});
