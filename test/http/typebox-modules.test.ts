// Store-independent: it compares schemas and compiled checks, not what a store holds.
/**
 * src/http/typebox-modules.ts takes two walks out of Elysia's named models. What it hands Elysia must
 * be what TypeBox would have made: the same computed model for every model of the app, and checks
 * that accept and refuse the same values.
 */
import { expect, test } from 'bun:test'
import { t } from 'elysia'
import { Kind, TModule, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { makeApi } from '../helpers'

async function appModels(): Promise<Record<string, TSchema>> {
  const api = await makeApi()
  return (api.app as unknown as { definitions: { type: Record<string, TSchema> } }).definitions.type
}

test("every model of the app comes out of Elysia's module as TypeBox computes it", async () => {
  const models = await appModels()
  const names = Object.keys(models).filter(name => Kind in models[name])
  expect(names.length).toBeGreaterThan(100)
  const typed = Object.fromEntries(names.map(name => [name, models[name]]))
  const ours = (t.Module(typed) as unknown as { $defs: Record<string, TSchema> }).$defs
  const typebox = (new TModule(typed) as unknown as { $defs: Record<string, TSchema> }).$defs
  expect(Object.keys(ours)).toEqual(Object.keys(typebox))
  for (const name of names) expect({ name, schema: ours[name] }).toEqual({ name, schema: typebox[name] })
  // Made again from its own models (as Elysia does on each controller), a module holds the same.
  const again = (t.Module({ ...ours }) as unknown as { $defs: Record<string, TSchema> }).$defs
  for (const name of names) expect(again[name]).toEqual(typebox[name])
})

test('a check compiled without the models is the code TypeBox compiles with them', async () => {
  const models = await appModels()
  const references = Object.values(models).filter(model => Kind in model)
  const compile = TypeCompiler.Compile
  let compared = 0
  for (const schema of references) {
    const ours = compile(schema, references)
    const withModels = TypeCompiler.Code(schema, references)
    expect(ours.Code()).toBe(withModels)
    expect(ours.Check({})).toBe(Value.Check(schema, references, {}))
    compared++
  }
  expect(compared).toBeGreaterThan(100)
})
