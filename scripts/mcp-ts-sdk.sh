#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK (@modelcontextprotocol/sdk, from
# the npm registry) into .mcp-ts/ at the top of the tree (gitignored), for
# runner's TestMCPTypeScriptClient: a client no one here wrote, run against
# the MCP server of the actor mcp:COMMAND. With it, TypeScript 5.9.3
# (typescript), which cmd/patchbench's TestExampleAgents uses to turn the
# example agent examples/agents/typescript/agent.ts into JavaScript. Needs
# node and npm.
#
# Usage: scripts/mcp-ts-sdk.sh [VERSION]   (the SDK's; default: the latest 1.x)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .mcp-ts
cd .mcp-ts
[ -f package.json ] || echo '{"private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "@modelcontextprotocol/sdk@${1:-1}" typescript@5.9.3
echo "installed: @modelcontextprotocol/sdk $(node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version') in $(pwd)"
