import yazl from "yazl";

/** Builds a zip in memory from `[path, content]` pairs (directories: content null). */
export async function buildZip(entries: Array<[string, string | null]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [path, content] of entries) {
    if (content === null) zip.addEmptyDirectory(path);
    else zip.addBuffer(Buffer.from(content), path);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * yazl refuses unsafe names, as a careful zip writer should; an attacker's archive does not.
 * Rewrites a same-length placeholder name in both the local header and central directory.
 */
export function withRawName(zip: Buffer, placeholder: string, raw: string): Buffer {
  if (placeholder.length !== raw.length) throw new Error("names must have the same length");
  const out = Buffer.from(zip);
  const from = Buffer.from(placeholder);
  let at = out.indexOf(from);
  while (at >= 0) {
    out.write(raw, at, "latin1");
    at = out.indexOf(from, at + from.length);
  }
  return out;
}
