/** One condition of a list filter, with the attribute names and values its placeholders stand for. */
export interface FilterCondition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** What a query's filter adds to it: spread into the query's input. */
export interface FilterParts {
  FilterExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * A list query's filter: the conditions given (a falsy entry is a filter the caller did not ask for) joined with
 * AND, their attribute names, and their values after `keyValues` (the key condition's). A filter with no condition
 * or no attribute name leaves that part out (DynamoDB refuses an empty one).
 */
export function queryFilter(
  keyValues: Record<string, unknown>,
  conditions: readonly (FilterCondition | false | '' | null | undefined)[],
): FilterParts {
  const used = conditions.filter((c): c is FilterCondition => Boolean(c));
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...keyValues };
  for (const c of used) {
    add(names, c.names);
    add(values, c.values);
  }
  return {
    ...(used.length > 0 && { FilterExpression: used.map((c) => c.expression).join(' AND ') }),
    ...(Object.keys(names).length > 0 && { ExpressionAttributeNames: names }),
    ExpressionAttributeValues: values,
  };
}

/** Two conditions may share a placeholder only if it stands for the same thing. */
function add<T>(into: Record<string, T>, from: Record<string, T> = {}): void {
  for (const [placeholder, value] of Object.entries(from)) {
    if (placeholder in into && !Object.is(into[placeholder], value))
      throw new Error(`Filter placeholder ${placeholder} stands for two things`);
    into[placeholder] = value;
  }
}
