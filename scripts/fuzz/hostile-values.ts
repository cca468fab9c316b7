import type { Prng } from "./prng.js";

// What a fuzzer feeds into fields: values chosen because services tend to mishandle them
// (built-in object keys, lone surrogates, control characters, path tricks, numbers at the
// edges of timers and integers), plus random strings and sizes from a long tail.

/** An array multiplied by a mutation stays within this much JSON. */
const MULTIPLIED_BYTES_MAX = 4 * 1024 * 1024;

export const HOSTILE_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "hasOwnProperty",
  "toString",
  "valueOf",
  "isPrototypeOf",
  "__defineGetter__",
] as const;

const HOSTILE_STRINGS = [
  "",
  " ",
  ...HOSTILE_KEYS,
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ufeff",
  "\u202e",
  "\r\nX-Injected: yes",
  "\n",
  "..",
  "../../etc/passwd",
  "%2e%2e%2f",
  "%00",
  "/absolute",
  "C:\\windows",
  "a\\b",
  "null",
  "undefined",
  "NaN",
  "-1",
  "1e309",
  "0x10",
  "true",
  "{}",
  "[]",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, meant literally
  "${7*7}",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "é",
  "😀",
  "::ffff:127.0.0.1",
  "127.0.0.1",
  "0.0.0.0/0",
  "::/0",
  "10.0.0.0/33",
  "latest",
  "v1.0.0",
] as const;

export const HOSTILE_NUMBERS = [
  0,
  -0,
  -1,
  1,
  1e-6,
  0.5,
  59.999,
  1e308,
  -1e308,
  2 ** 31,
  2 ** 31 - 1,
  2 ** 32,
  2 ** 53 + 2,
  3_000_000,
  86_400_000,
] as const;

/** A string of `length` code points drawn from every plane, surrogate halves included. */
export function randomUnicode(random: Prng, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    const kind = random.below(6);
    const code =
      kind === 0
        ? random.below(0x20) // control characters
        : kind === 1
          ? 0xd800 + random.below(0x800) // a lone surrogate half
          : kind === 2
            ? 0x80 + random.below(0x780) // Latin and friends
            : kind === 3
              ? 0x10000 + random.below(0x10000) // astral (a valid surrogate pair)
              : 0x20 + random.below(0x5f); // printable ASCII
    out += String.fromCharCode(...(code > 0xffff ? surrogatePair(code) : [code]));
  }
  return out;
}

function surrogatePair(code: number): [number, number] {
  const offset = code - 0x10000;
  return [0xd800 + (offset >> 10), 0xdc00 + (offset & 0x3ff)];
}

/** One character repeated up to `maxLength` times. */
export function longRun(random: Prng, maxLength: number): string {
  return random
    .pick(["a", "é", "😀", " ", "\t", "=", "/", ".", "\u0000"])
    .repeat(random.size(maxLength));
}

export function hostileString(random: Prng, maxLength = 70_000): string {
  switch (random.below(5)) {
    case 0:
    case 1:
      return random.pick(HOSTILE_STRINGS);
    case 2:
      return randomUnicode(random, random.size(200));
    case 3:
      return longRun(random, maxLength);
    default:
      return random.bytes(random.size(300)).toString("latin1");
  }
}

export function hostileNumber(random: Prng): number {
  return random.chance(0.7)
    ? random.pick(HOSTILE_NUMBERS)
    : (random.next() - 0.5) * 10 ** random.below(12);
}

/** Any JSON value, of any type, nested a little. */
export function hostileJson(random: Prng, depth = 0): unknown {
  switch (random.below(depth > 2 ? 5 : 7)) {
    case 0:
      return null;
    case 1:
      return random.chance(0.5);
    case 2:
      return hostileNumber(random);
    case 3:
    case 4:
      return hostileString(random);
    case 5:
      return Array.from({ length: random.size(20) }, () => hostileJson(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = random.size(6); i > 0; i--) {
        ownProperty(
          object,
          random.chance(0.5) ? random.pick(HOSTILE_KEYS) : hostileString(random, 40),
          hostileJson(random, depth + 1),
        );
      }
      return object;
    }
  }
}

/** Sets `key` as an own property, even `__proto__` (which a plain assignment would not). */
export function ownProperty(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * One random change to a JSON value: a field removed, retyped, replaced by a hostile value, an
 * unknown or built-in key added, an array multiplied. Returns a new value; `value` is untouched.
 */
export function mutateJson(value: unknown, random: Prng): unknown {
  if (Array.isArray(value)) {
    const copy = [...value];
    switch (random.below(4)) {
      case 0:
        return copy.length
          ? copy.map((item, i) =>
              i === random.below(copy.length) ? mutateJson(item, random) : item,
            )
          : [hostileJson(random)];
      case 1: {
        // Many copies of the items, within a few MiB of JSON.
        const unit = (JSON.stringify(copy) ?? "").length + 1;
        const length = Math.min(random.size(5000), Math.ceil(MULTIPLIED_BYTES_MAX / unit));
        return Array.from(
          { length },
          (_, i) => copy[i % Math.max(1, copy.length)] ?? hostileJson(random),
        );
      }
      case 2:
        return [];
      default:
        return hostileJson(random);
    }
  }
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) ownProperty(copy, key, item);
    const keys = Object.keys(copy);
    const key = keys.length ? random.pick(keys) : undefined;
    switch (random.below(5)) {
      case 0:
        if (key !== undefined) delete copy[key];
        return copy;
      case 1:
        ownProperty(
          copy,
          random.chance(0.6) ? random.pick(HOSTILE_KEYS) : hostileString(random, 64),
          hostileJson(random),
        );
        return copy;
      case 2:
        return hostileJson(random);
      default:
        if (key !== undefined) ownProperty(copy, key, mutateJson(copy[key], random));
        return copy;
    }
  }
  if (typeof value === "string") {
    return random.chance(0.7) ? hostileString(random) : hostileJson(random);
  }
  if (typeof value === "number") {
    return random.chance(0.7) ? hostileNumber(random) : hostileJson(random);
  }
  return hostileJson(random);
}

/** A JSON text longer than this (mutations compound) is cut: the services refuse far less. */
const JSON_TEXT_MAX = 12 * 1024 * 1024;

/** JSON text, sometimes damaged at the text level (cut, nested too deep, a duplicated key). */
export function jsonText(value: unknown, random: Prng): string {
  let text: string;
  try {
    text = (JSON.stringify(value) ?? "null").slice(0, JSON_TEXT_MAX);
  } catch {
    // RangeError: compounded copies passed the longest string V8 builds.
    text = "[]";
  }
  switch (random.below(14)) {
    case 0:
      return text.slice(0, random.below(text.length + 1));
    case 1: {
      const depth = random.size(200_000);
      return `${"[".repeat(depth)}${"]".repeat(depth)}`;
    }
    case 2:
      return text.startsWith("{") && text.length > 2
        ? `{"__proto__":{"polluted":1},${text.slice(1)}`
        : text;
    case 3:
      return text.replace(
        /^\{"([^"]+)":/,
        (whole, key: string) => `{"${key}":null,${whole.slice(1)}`,
      );
    case 4:
      return `${text}${random.pick(["", " ", "\u0000", "garbage", "}", ",{}"])}`;
    default:
      return text;
  }
}
