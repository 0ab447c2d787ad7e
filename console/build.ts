/**
 * Builds the console with Bun's bundler: console/main.tsx and what it imports (Preact, the CSS)
 * into minified files whose names carry a hash of their content. Prints them as JSON
 * (`[{ name, type, text }]`) for console/bundle.ts, or with `--out DIR` writes them there (to look
 * at them, or to measure their size: bench/console.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'

const result = await Bun.build({
  entrypoints: [join(import.meta.dir, 'main.tsx')],
  target: 'browser',
  minify: true,
  naming: { entry: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]' },
  define: { 'process.env.NODE_ENV': '"production"' },
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
const files = await Promise.all(
  result.outputs.map(async output => ({ name: basename(output.path), type: output.type, text: await output.text() })),
)
const at = process.argv.indexOf('--out')
if (at > 0) {
  const dir = process.argv[at + 1]!
  mkdirSync(dir, { recursive: true })
  for (const file of files) writeFileSync(join(dir, file.name), file.text)
  console.log(files.map(file => `${file.name} ${file.text.length} bytes`).join('\n'))
} else process.stdout.write(JSON.stringify(files))
