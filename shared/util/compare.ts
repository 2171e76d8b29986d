/**
 * Orders strings by UTF-16 code unit (what `<` does): the same order in every process and
 * locale, so rows and locks taken in this order are taken in the same order everywhere.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
