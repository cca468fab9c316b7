import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeTempDir } from "@rd/common/test-kit";

const README = join(dirname(fileURLToPath(import.meta.url)), "../../README.md");
const MARKER = "<!-- webhook-verify:";

export type VerifyRelaySignature = (
  secret: string,
  header: string,
  rawBody: string | Buffer,
  toleranceSecs?: number,
) => boolean;

/**
 * The README's verification snippet, loaded exactly as written (the `js` block after its
 * marker), so the documentation is what the tests check signatures with.
 */
export async function readmeVerifier(): Promise<VerifyRelaySignature> {
  const readme = await readFile(README, "utf8");
  const after = readme.slice(readme.indexOf(MARKER));
  const block = /```js\n([\s\S]*?)```/.exec(after)?.[1];
  if (readme.indexOf(MARKER) < 0 || !block) throw new Error("README: no verification snippet");
  const temp = await makeTempDir("relay-verify-");
  const file = join(temp.path, "verify.mjs");
  await writeFile(file, block);
  const module = (await import(pathToFileURL(file).href)) as {
    verifyRelaySignature: VerifyRelaySignature;
  };
  await temp.remove();
  return module.verifyRelaySignature;
}
