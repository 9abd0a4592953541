#!/bin/sh
# Regenerates prices.json, the price table of the models of the supported
# providers (anthropic, openai), from the model list pi-ai generates and
# publishes on npm (@mariozechner/pi-ai, dist/models.generated.js, which
# its scripts/generate-models.ts writes).
#
#   internal/llm/prices/generate.sh [VERSION]    # default: the latest
#
# Needs npm and node. Writes prices.json next to this script; review the
# diff and commit it. Prices are US dollars per million tokens.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkg="@mariozechner/pi-ai@${1:-latest}"
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null && tar xzf ./*.tgz)
version=$(node -p 'require(process.argv[1]).version' "$tmp/package/package.json")
node --input-type=module - "$tmp/package/dist/models.generated.js" "$version" "$(date -u +%Y-%m-%d)" >"$here/prices.json" <<'JS'
const [file, version, date] = process.argv.slice(2);
const { MODELS } = await import(file);
const lines = [];
for (const provider of ["anthropic", "openai"]) {
  for (const id of Object.keys(MODELS[provider]).sort()) {
    const c = MODELS[provider][id].cost;
    lines.push(`    ${JSON.stringify(provider + "/" + id)}: ${JSON.stringify([c.input, c.output, c.cacheRead, c.cacheWrite])}`);
  }
}
console.log(`{
  "source": "npm @mariozechner/pi-ai@${version} dist/models.generated.js",
  "date": "${date}",
  "columns": "US dollars per million tokens: input, output, cacheRead, cacheWrite",
  "models": {
${lines.join(",\n")}
  }
}`);
JS
