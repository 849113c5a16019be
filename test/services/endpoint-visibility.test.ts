import { describe, expect, it } from 'vitest';
import { maskEndpoint } from '../../src/services/webhooks/endpoint-visibility.js';

describe('maskEndpoint (issue 46, review 5 WH1)', () => {
  it.each([
    ['https://hooks.example.com/in', 'https://hooks.example.com/in'],
    ['https://hooks.example.com/in?token=abc', 'https://hooks.example.com/in?token=•••'],
    ['https://hooks.example.com/in?a=1&b=2&flag', 'https://hooks.example.com/in?a=•••&b=•••&flag'],
    ['https://hooks.example.com/in?token=abc#part', 'https://hooks.example.com/in?token=•••#part'],
    ['https://user:pass@hooks.example.com/in?x=1', 'https://•••@hooks.example.com/in?x=•••'],
    ['https://user@hooks.example.com', 'https://•••@hooks.example.com'],
    ['https://hooks.example.com/a@b/c', 'https://hooks.example.com/a@b/c'],
    ['https://hooks.example.com/#x?y=1', 'https://hooks.example.com/#x?y=1'],
  ])('%s → %s', (url, shown) => {
    expect(maskEndpoint(url)).toBe(shown);
  });
});
