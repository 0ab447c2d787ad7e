/**
 * Starts one of the workers of this folder, from the sources or from inside the executable made by
 * `npm run build`, where `bun build --compile` embeds each worker at /$bunfs/root/workers/NAME.js.
 */
export function startWorker(name: 'event-search.worker'): Worker {
  const compiled = import.meta.url.startsWith('file:///$bunfs/')
  const worker = new Worker(compiled ? `/$bunfs/root/workers/${name}.js` : new URL(`./${name}.ts`, import.meta.url).href)
  // A worker must not keep the process alive on its own.
  ;(worker as unknown as { unref(): void }).unref()
  return worker
}
