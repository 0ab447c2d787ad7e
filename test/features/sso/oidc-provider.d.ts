/** oidc-provider ships no types: the tests use its constructor, `listen`, and plain configuration. */
declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    listen(port: number, host: string): unknown
  }
}
