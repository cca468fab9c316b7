import { serve } from "./main.js";
import { VERSION } from "./version.js";

const USAGE = `delivery ${VERSION}

Usage: delivery [serve]

  serve     start the HTTP server (the default); configured by environment variables,
            see packages/delivery/README.md. Stops cleanly on SIGTERM/SIGINT.
`;

/** Entry point of the `delivery` binary; resolves to the process exit code. */
export async function run(argv: string[]): Promise<number> {
  const [command = "serve", ...rest] = argv;
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command === "--version") {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (command !== "serve" || rest.length > 0) {
    process.stderr.write(`unknown arguments: ${argv.join(" ")}\n\n${USAGE}`);
    return 2;
  }
  return serve(process.env);
}
