// Generates src/generated/openapi.ts from the committed contract clients/openapi.json.
//
//   node scripts/generate-types.mjs           # write the file
//   node scripts/generate-types.mjs --check   # exit 1 when the committed file differs (CI)
//
// The generated file is committed, so that the package type-checks without a build step and a
// change of the contract shows up in review; --check keeps it from drifting.
import { readFile, writeFile } from "node:fs/promises";
import openapiTS, { astToString } from "openapi-typescript";

const contract = new URL("../../openapi.json", import.meta.url);
const target = new URL("../src/generated/openapi.ts", import.meta.url);
const header =
  "// Generated from clients/openapi.json by `bun run clients:build` (openapi-typescript). Do not edit:\n" +
  "// change the server's handlers, regenerate the contract, then run the build.\n\n";

const generated = header + astToString(await openapiTS(contract));

if (process.argv.includes("--check")) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== generated) {
    console.error(
      "clients/typescript/src/generated/openapi.ts is not what clients/openapi.json generates: run `bun run clients:build` and commit the result",
    );
    process.exit(1);
  }
  console.log("generated types match clients/openapi.json");
} else {
  await writeFile(target, generated);
}
