/**
 * Elysia keeps an app's named models in one TypeBox module and makes that module again, from every
 * model known so far, each time a controller is added (29 controllers, 131 models) and when a
 * route's schemas are first read: TypeBox then walks every model again (`ComputeModuleProperties`).
 * That walk was two thirds of the CPU of building an app and of each route's first request. A model
 * that refers to no other model comes out of the walk the same whatever module it is in, so
 * `t.Module` (the one Elysia calls) is replaced, once, by one that walks each such model once per
 * process and hands each module its own shallow copy (Elysia may set a copy's `$id`). A module with a
 * model that refers to others (a `$ref`, a type computed from another model) is made whole by
 * TypeBox, as before.
 */
import { t } from 'elysia'
import { Kind, TModule, type TProperties, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'

const make = t.Module.bind(t)

/** A model as a module holds it → its name there: a module made from it again keeps it. */
const held = new WeakMap<object, string>()
/** A model that refers to no other → its walked form. */
let walked = new WeakMap<object, TSchema>()

/**
 * Forgets every walked form: for after models were written to (http/response-schemas.ts marks the
 * response models `additionalProperties: false`, which reaches every model holding one of them), so
 * that no module hands out an earlier form.
 */
export function forgetWalkedModels() {
  walked = new WeakMap()
}
/** Whether a model refers to another, once per model. */
const refers = new WeakMap<object, boolean>()

function refersToModels(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const kind = (value as Record<symbol, unknown>)[Kind]
  if (kind === 'Ref' || kind === 'Computed' || kind === 'Import' || kind === 'This' || '$ref' in value) return true
  for (const key in value) if (refersToModels((value as Record<string, unknown>)[key])) return true
  return false
}

function selfContained(model: object): boolean {
  let answer = refers.get(model)
  if (answer === undefined) refers.set(model, (answer = refersToModels(model)))
  return !answer
}

function moduleOf(models: TProperties): TModule<TProperties> {
  const defs: Record<string, TSchema> = {}
  for (const name in models) {
    const model = models[name]
    if (held.get(model) === name) {
      defs[name] = model
      continue
    }
    if (!selfContained(model)) {
      const module = make(models)
      const made = (module as unknown as { $defs: Record<string, TSchema> }).$defs
      for (const key in made) held.set(made[key], key)
      return module
    }
    let done = walked.get(model)
    if (done === undefined) {
      const alone = make({ [name]: model }) as unknown as { $defs: Record<string, TSchema> }
      walked.set(model, (done = alone.$defs[name]))
    }
    const copy = { ...done, $id: name }
    held.set(copy, name)
    defs[name] = copy
  }
  const module = Object.create(TModule.prototype) as TModule<TProperties>
  ;(module as unknown as { $defs: TProperties }).$defs = defs
  return module
}

;(t as { Module: unknown }).Module = moduleOf

/**
 * Elysia compiles each route's validators with every model of the app as TypeBox references, and
 * TypeBox checks each reference's shape (`IsSchema`, a deep walk) on every compile: 131 models per
 * validator, most of a route's first request. References only resolve a schema's `$ref`s, so a
 * schema that refers to no model is compiled without them, into the same check.
 */
const compile = TypeCompiler.Compile
;(TypeCompiler as { Compile: typeof compile }).Compile = ((schema: TSchema, references: TSchema[] = []) =>
  compile(schema, selfContained(schema) ? [] : references)) as typeof compile
