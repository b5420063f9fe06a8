#!/usr/bin/env node
/**
 * `svc`, the command-line client (the `bin` of `@svc/cli`):
 *
 *   svc runs start agent_demo --message "Summarise the orders" --wait
 *   node packages/cli/dist/main.js records insert <connection> dbo.orders id=7 sku=B-7
 *   pnpm svc index                                   (from the repository root)
 *
 * `svc --help` lists the commands, where the base URL and credential come from, and the exit codes.
 */
import { text } from 'node:stream/consumers';
import { runCli } from './program.js';

const interrupt = new AbortController();
// Ctrl-C cancels the request or the wait under way; runCli then says so and exits 130.
process.once('SIGINT', () => interrupt.abort(new Error('interrupted')));

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (chunk) => void process.stdout.write(chunk),
  stderr: (chunk) => void process.stderr.write(chunk),
  terminal: process.stderr.isTTY && process.env['TERM'] !== 'dumb' ? process.stderr : undefined,
  readStdin: () => text(process.stdin),
  stdinIsTerminal: process.stdin.isTTY === true,
  interrupt: interrupt.signal,
});
process.exitCode = code;
