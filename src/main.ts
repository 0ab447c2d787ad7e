/**
 * The program: reads its arguments (src/cli.ts) and runs the command they name. Only serving
 * loads the service (server.ts: the HTTP application, every controller, the workers); the other
 * commands load what they use (cli.ts), so that `flagstore backup` or `--version` costs a fraction
 * of a start.
 */
import { parseCommand, runCommand, UsageError, USAGE } from './cli'

let command
try {
  command = parseCommand(process.argv.slice(2))
} catch (error) {
  if (!(error instanceof UsageError)) throw error
  process.stderr.write(`flagstore: ${error.message}\n\n${USAGE}`)
  process.exit(2)
}
if (command.name === 'serve') await (await import('./server')).serve()
else process.exit(await runCommand(command))
