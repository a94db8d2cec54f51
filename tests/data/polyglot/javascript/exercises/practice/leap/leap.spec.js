import { isLeap } from './leap';

describe('A leap year', () => {
  test('year not divisible by 4 in common year', () => {
    expect(isLeap(2015)).toBe(false);
  });

  xtest('year divisible by 100, not divisible by 400 in common year', () => {
    expect(isLeap(2100)).toBe(false);
  });

  xtest('year divisible by 400 is leap year', () => {
    expect(isLeap(2000)).toBe(true);
  });
});
