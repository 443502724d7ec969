// Validates a glTF binary with the Khronos glTF validator (the npm package
// `gltf-validator`): prints the counts and the first messages, and fails on any
// error or warning. Usage: node validate-gltf.js FILE.glb
const fs = require('fs');
const validator = require('gltf-validator');

const path = process.argv[2];
const data = new Uint8Array(fs.readFileSync(path));
validator.validateBytes(data, { maxIssues: 1000 }).then((report) => {
  const i = report.issues;
  console.log(`${path}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos, ${i.numHints} hints`);
  for (const m of i.messages.filter((m) => m.severity < 2).slice(0, 20)) {
    console.log(`  ${m.code} ${m.pointer || ''}: ${m.message}`);
  }
  process.exit(i.numErrors + i.numWarnings > 0 ? 1 : 0);
}).catch((e) => {
  console.error(`${path}: ${e}`);
  process.exit(2);
});
