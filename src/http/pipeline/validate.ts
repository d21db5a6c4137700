import { type AnyRoute, queryWithRepeats } from '../route.ts';
import { validate as parseWith } from '../validation.ts';

/**
 * Step 8: the body and the query through the route's zod schemas → 400 `INVALID_FORM_BODY` with per-field
 * element codes (docs/conventions.md#errors). Without a schema the input passes as it came.
 */
export function validate(
  spec: Pick<AnyRoute, 'body' | 'query' | 'repeatedQuery'>,
  rawBody: unknown,
  url: string,
  parsedQuery: unknown,
): { body: unknown; query: unknown } {
  const body = spec.body ? parseWith(spec.body, rawBody) : rawBody;
  const query = spec.query
    ? parseWith(spec.query, spec.repeatedQuery ? queryWithRepeats(url, spec.repeatedQuery) : (parsedQuery ?? {}))
    : parsedQuery;
  return { body, query };
}
