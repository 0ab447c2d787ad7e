/** Files imported `with { type: 'file' }` are their path (embedded by `bun build --compile`). */
declare module '*.css' {
  const path: string
  export default path
}
declare module '*.png' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/*.js' {
  const path: string
  export default path
}
