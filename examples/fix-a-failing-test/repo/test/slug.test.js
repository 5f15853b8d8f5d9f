const assert = require('node:assert');
const { test } = require('node:test');
const { slugify } = require('../src/slug');

test('slugify joins the words with one dash and drops the punctuation', () => {
  assert.strictEqual(slugify('Hello, World!'), 'hello-world');
});
