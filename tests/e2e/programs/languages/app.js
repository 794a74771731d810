// A CPU-bound Node program with named functions, JSON parsing and regular
// expressions (tests/e2e/languages_test.cpp, bench/languages/). Runs for
// argv[2] seconds (default 1.5).
'use strict';

const kTag = /^([a-z]+)-(\d+)$/;

function makeDocument(count) {
  const records = [];
  for (let i = 0; i < count; i++) {
    records.push({id: i, name: 'record ' + i,
                  tags: ['alpha-' + i, 'beta-' + (i * 7), 'Gamma' + i]});
  }
  return JSON.stringify(records);
}

function parseDocument(text) { return JSON.parse(text); }

function scoreTags(tags) {
  let score = 0;
  for (const tag of tags) {
    const m = kTag.exec(tag);
    if (m !== null) score += m[1].length + Number(m[2]) % 13;
  }
  return score;
}

function fibonacci(n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

function scoreDocument(records) {
  let total = 0;
  for (const record of records) total += scoreTags(record.tags);
  return total + fibonacci(18);
}

function main() {
  const seconds = Number(process.argv[2] || '1.5');
  const text = makeDocument(400);
  const deadline = Date.now() + seconds * 1000;
  let total = 0;
  while (Date.now() < deadline) total += scoreDocument(parseDocument(text));
  console.log('total', total);
}

main();
