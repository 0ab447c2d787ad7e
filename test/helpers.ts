/**
 * Test helpers, one module per concern under test/helpers/: the app and its typed client (api.ts),
 * one app for many fresh services (shared-app.ts), assertions on answers and on the store
 * (expect.ts), temporary directories and cleanups (files.ts), spawned servers and waiting
 * (processes.ts), the admin secret and paths every test uses (service.ts, which loads no service:
 * test/system imports the modules it needs, not this barrel), SDKs (sdk.ts), console users
 * (users.ts), and argon2id cached by its arguments (passwords.ts, loaded with api.ts).
 */
export * from './helpers/api'
export * from './helpers/expect'
export * from './helpers/files'
export * from './helpers/processes'
export * from './helpers/sdk'
export * from './helpers/service'
export * from './helpers/shared-app'
export * from './helpers/users'
