/** Request and response schemas of tag types, with Unleash's schema names. */
import { t } from 'elysia'
import { Integer, PATTERN_RULE } from '../../http/schemas'

const COLOR_PATTERN = '^(|#[0-9A-Fa-f]{6}|[a-zA-Z0-9]+(\\.[a-zA-Z0-9]+)*)$'

/** The optional properties of a tag type, as the routes and the import take them. */
export const TagTypeFields = {
  description: t.Optional(
    t.String({ description: 'What tags of this type are for', maxLength: 1000, examples: ['Where the flag is used'] }),
  ),
  icon: t.Optional(
    t.Union([t.String({ maxLength: 1000 }), t.Null()], {
      description: 'An icon for the type (not used by the service)',
    }),
  ),
  color: t.Optional(
    t.Union(
      [
        t.String({
          maxLength: 100,
          pattern: COLOR_PATTERN,
          [PATTERN_RULE]:
            'a hex colour such as #FFFFFF, a theme reference such as primary.main (letters and digits joined by dots), or empty',
        }),
        t.Null(),
      ],
      {
        description: 'A colour: a hex code such as #FFFFFF or a theme reference such as primary.main',
      },
    ),
  ),
}

export const TagType = t.Object(
  {
    name: t.String({ description: "Tag type name, as a tag's type" }),
    description: t.String({ description: 'What tags of this type are for' }),
    icon: t.Union([t.String(), t.Null()], { description: 'An icon for the type' }),
    color: t.Union([t.String(), t.Null()], { description: 'A colour for the type' }),
  },
  { description: 'A tag type: the kind of tag a flag may carry' },
)

export const CreateTagType = t.Object(
  {
    name: t.String({
      description: 'Tag type name: 2 to 50 URL-safe characters',
      maxLength: 1000,
      examples: ['location'],
    }),
    ...TagTypeFields,
  },
  {
    description: 'A tag type to create',
    examples: [{ name: 'location', description: 'Where the flag is used', color: '#FF5733' }],
  },
)

export const UpdateTagType = t.Object(TagTypeFields, {
  description: 'New values for the given properties; missing ones are left alone',
  examples: [{ description: 'Where the flag is used', icon: null }],
})

export const TagTypeList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    tagTypes: t.Array(TagType, { description: 'The tag types, by name' }),
  },
  { description: 'Every tag type' },
)

export const TagTypeAnswer = t.Object(
  { version: Integer({ description: 'Schema version, 1' }), tagType: TagType },
  { description: 'One tag type' },
)

export const ValidTagType = t.Object(
  { valid: t.Boolean({ description: 'Always true: an invalid or taken name answers 400 or 409' }), tagType: TagType },
  { description: 'The tag type as it would be created' },
)

/** The named schemas of the tag-type routes, as routes refer to them and OpenAPI lists them. */
export const tagTypeModels = {
  tagTypeSchema: TagType,
  tagTypesSchema: TagTypeList,
  tagTypeResponseSchema: TagTypeAnswer,
  createTagTypeSchema: CreateTagType,
  updateTagTypeSchema: UpdateTagType,
  validateTagTypeSchema: ValidTagType,
}
