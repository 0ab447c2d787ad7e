/**
 * Starts a worker given its entry file's path under src/ (without extension), from the sources or
 * from inside the executable made by `npm run build`: `bun build --compile` embeds each entry point
 * at /$bunfs/root/ plus its path under src/ (the entry points' common folder), ending in .js. A
 * worker's entry file must be listed in package.json's `build` script.
 */
export function startWorker(entry: 'features/events/search/event-search.worker'): Worker {
  const compiled = import.meta.url.startsWith('file:///$bunfs/')
  const worker = new Worker(compiled ? `/$bunfs/root/${entry}.js` : new URL(`../${entry}.ts`, import.meta.url).href)
  // A worker must not keep the process alive on its own.
  ;(worker as unknown as { unref(): void }).unref()
  return worker
}
