import { describe, expect, it } from "vitest";
import { type ProgramSpec, parseCommandLine, usageText } from "./command-line.js";

const SPEC: ProgramSpec<"serve" | "check"> = {
  name: "demo",
  version: "1.2.3",
  about: "a demonstration service",
  commands: {
    serve: { summary: "start the server" },
    check: {
      summary: "check one domain",
      args: "[domain]",
      maxArgs: 1,
      details: "Looks the domain up.",
      env: ["DEMO_DNS"],
    },
  },
  defaultCommand: "serve",
  environment: [
    { name: "DEMO_CONFIG", about: "configuration file", default: "demo.json" },
    { name: "DEMO_DNS", about: "DNS server" },
  ],
  exitCodes: "0 ok, 1 failure, 2 usage or configuration error",
};

const parse = (...argv: string[]) => parseCommandLine(SPEC, argv);

describe("parseCommandLine", () => {
  it("runs the default command when none is named, and a named one with its arguments", () => {
    expect(parse()).toEqual({ kind: "run", command: "serve", args: [] });
    expect(parse("check", "a.test")).toEqual({ kind: "run", command: "check", args: ["a.test"] });
    expect(parse("check", "--", "-odd")).toEqual({ kind: "run", command: "check", args: ["-odd"] });
  });

  it.each([[["--help"]], [["-h"]], [["help"]]])(
    "%j prints the program's help on stdout, exit 0",
    (argv) => {
      expect(parse(...argv)).toEqual({
        kind: "exit",
        code: 0,
        stream: "stdout",
        text: usageText(SPEC),
      });
    },
  );

  it.each([
    [["serve", "--help"]],
    [["serve", "-h"]],
    [["help", "serve"]],
    [["--help", "serve"]],
    [["serve", "--help", "--version"]],
  ])("%j prints the command's help and runs nothing", (argv) => {
    expect(parse(...argv)).toEqual({
      kind: "exit",
      code: 0,
      stream: "stdout",
      text: usageText(SPEC, "serve"),
    });
  });

  it("prints the version with --version, after any command", () => {
    const version = { kind: "exit", code: 0, stream: "stdout", text: "1.2.3\n" };
    expect(parse("--version")).toEqual(version);
    expect(parse("serve", "--version")).toEqual(version);
  });

  it.each([
    [["--bogus"], 'demo: unknown option "--bogus"'],
    [["serve", "-x"], 'demo: unknown option "-x"'],
    [["serve", "--help=yes"], 'demo: option "--help" takes no value'],
    [["serve", "--help", "--port", "1"], 'demo: unknown option "--port"'],
    [["deploy"], 'demo: unknown command "deploy"'],
    [["constructor"], 'demo: unknown command "constructor"'],
    [["help", "deploy"], 'demo: unknown command "deploy"'],
    [["help", "serve", "check"], 'demo: "help" takes at most one command'],
  ])("%j is a usage error: exit 2, the problem and the usage on stderr", (argv, problem) => {
    const line = parse(...argv);
    expect(line).toMatchObject({ kind: "exit", code: 2, stream: "stderr" });
    expect(line.kind === "exit" && line.text).toBe(`${problem}\n\n${usageText(SPEC)}`);
  });

  it("refuses more arguments than a command takes, with that command's usage", () => {
    expect(parse("serve", "extra")).toEqual({
      kind: "exit",
      code: 2,
      stream: "stderr",
      text: `demo: too many arguments for "serve"\n\n${usageText(SPEC, "serve")}`,
    });
    expect(parse("check", "a.test", "b.test")).toMatchObject({ code: 2 });
  });
});

describe("usageText", () => {
  it("lists the commands (the default marked), the options, every variable with its default, and the exit codes", () => {
    expect(usageText(SPEC)).toBe(
      [
        "demo 1.2.3: a demonstration service",
        "",
        "Usage: demo [command] [options]",
        "",
        "Commands:",
        "  serve           start the server (the default)",
        "  check [domain]  check one domain",
        "  help [command]  print this help, or a command's",
        "",
        "Options:",
        "  -h, --help  print this help and exit",
        "  --version   print the version and exit",
        "",
        "Environment:",
        "  DEMO_CONFIG  configuration file (default: demo.json)",
        "  DEMO_DNS     DNS server",
        "",
        "Exit codes: 0 ok, 1 failure, 2 usage or configuration error",
        "",
      ].join("\n"),
    );
  });

  it("shows a command's arguments, details and only the variables it reads", () => {
    const text = usageText(SPEC, "check");
    expect(text).toMatch(
      /^demo check: check one domain\n\nUsage: demo check \[domain\] \[options\]/,
    );
    expect(text).toContain("\n\nLooks the domain up.\n\n");
    expect(text).toContain("  DEMO_DNS  DNS server\n");
    expect(text).not.toContain("DEMO_CONFIG");
  });
});
