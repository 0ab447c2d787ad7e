/**
 * The ceiling for a response: a bare Bun server returning fixed, pre-serialised bytes, for
 * `bench/http.ts` to compare the service with. Usage: bun bench/bare-server.ts PORT FILE
 */
const [port, file] = process.argv.slice(2)
const body = await Bun.file(file).bytes()
const headers = { 'content-type': 'application/json' }
Bun.serve({
  port: Number(port),
  hostname: '127.0.0.1',
  fetch: () => new Response(body, { headers }),
})
console.log('ready')
export {}
