export function twice(x) {
  return x + x;
}
