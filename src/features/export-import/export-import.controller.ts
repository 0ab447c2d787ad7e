import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, lateResponse, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { exportImportModels } from './export-import.model'
import { EXPORT_EVENTS_PER_HOUR, type ExportImportService } from './export-import.service'

const tags = ['Import/Export']

export function exportImportController(service: ExportImportService, auth: Authorization) {
  return controllerBase(auth, exportImportModels)
    .post(
      '/api/admin/features-batch/export',
      async ({ body, caller, set }) => {
        const result = await service.export(body, caller)
        if (body.downloadFile)
          set.headers['content-disposition'] =
            `attachment; filename="export-${new Date().toISOString().slice(0, 10)}.json"`
        // Answered after the export's event is committed, so a large export goes out as a stream.
        return lateResponse(JSON.stringify(result))
      },
      {
        auth: 'NONE',
        body: 'exportQuerySchema',
        response: { 200: 'exportResultSchema', ...bodyErrors(404), ...authErrors(503) },
        detail: {
          operationId: 'exportFeatures',
          summary: 'Export flags from an environment',
          tags,
          description:
            'Exports the live flags selected by `tag` (a tag value of any type, or `type:value`), else by `features` (unknown names skipped), ' +
            'else of `project`, else all, with their strategies, variants and on/off state in `environment`, their tags, the segments ' +
            'their strategies use, the tag types of their tags, the context fields their constraints, stickiness and variant overrides ' +
            'name (those defined here), and their parents: the body the import takes. A token limited to some projects exports only their ' +
            'flags. An unknown environment answers 404 (Unleash exports nothing). Records a small `features-exported` event: the environment, ' +
            "the selection, the token's projects, how many flags and a sha256 of their names (Unleash stores the whole export). At most " +
            `${EXPORT_EVENTS_PER_HOUR} such events per token and hour: past that, exports are counted into the token's next event (\`unrecorded\`).`,
        },
      },
    )
    .post('/api/admin/features-batch/validate', ({ body, caller }) => service.validate(body, caller), {
      auth: 'NONE',
      body: 'importTogglesSchema',
      response: { 200: 'importTogglesValidateSchema', ...bodyErrors(404), ...authErrors(503) },
      detail: {
        operationId: 'validateImport',
        summary: 'Validate an import',
        tags,
        description:
          'Reports, without changing anything, what the same body sent to importToggles would meet: `errors` (each makes the import ' +
          'fail, among them context fields whose imported legal values ours lack), `warnings` (flags that exist and will be overwritten, ' +
          'archived flags that will be left out, custom strategy types used) ' +
          "and `permissions` the token lacks. Unleash's checks, and ours: the import is made in a transaction that is rolled back, so a " +
          'strategy, variant or tag the single routes would refuse is reported too. Unknown project or environment: 404.',
      },
    })
    .post(
      '/api/admin/features-batch/import',
      async ({ body, caller }) => {
        await service.import(body, caller)
        return noContent()
      },
      {
        auth: { permission: 'UPDATE_FEATURE', projectInBody: true },
        body: 'importTogglesSchema',
        response: { 200: t.Void({ description: 'Imported' }), ...bodyErrors(404), ...authErrors(503) },
        detail: {
          operationId: 'importToggles',
          summary: 'Import flags into a project and environment',
          tags,
          description:
            'Imports an export (from this service or from Unleash) into `project` and `environment`, which need not be those it was ' +
            'exported from. Flags are created, or updated when they exist in the project (archived ones are left out; ones of other ' +
            "projects refuse the import); variants are replaced where given; when `featureTags` is given, the flags' tags become exactly " +
            "those; the flags' strategies in the environment are replaced by the imported ones (segments matched by name); on/off is set; " +
            'parents are added. All or nothing, in one commit: any problem answers 400 naming every finding (or the refused entry, by its ' +
            'path), and nothing is changed. Each change records the event its own route records, then `features-imported`. Needs ' +
            "UPDATE_FEATURE on the body's project (Unleash refuses admin tokens here; our tokens have roles). Tag types the tags need and " +
            'context fields the import lists that are missing here are created first (tag-type-created, context-field-created), which ' +
            'needs CREATE_TAG_TYPE / CREATE_CONTEXT_FIELD and a token for all projects (403 otherwise); a context field we have must ' +
            'hold every imported legal value, else the import is refused.',
        },
      },
    )
}
