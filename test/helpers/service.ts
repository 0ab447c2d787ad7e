/**
 * What every test says to the service, whether it runs in the test's process (api.ts) or as a
 * process of its own (processes.ts): the admin secret it is started with and the admin API's paths.
 * Nothing here loads the service, so that a test of spawned processes does not pay for loading it.
 */

export const ADMIN_SECRET = '*:*.test-admin-secret-0123456789abcdef'

/** Paths of the admin API. */
export const paths = {
  flag: (flag: string, project = 'default') => `/api/admin/projects/${project}/features/${flag}`,
  strategies: (flag: string, environment = 'development', project = 'default') =>
    `${paths.flag(flag, project)}/environments/${environment}/strategies`,
  variants: (flag: string, environment = 'development', project = 'default') =>
    `${paths.flag(flag, project)}/environments/${environment}/variants`,
  tags: (flag: string) => `/api/admin/features/${flag}/tags`,
}
