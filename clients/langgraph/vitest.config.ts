import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true, // LangGraph's validation suite calls describe/it/expect as globals
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // One file at a time: the machine is small, and the README test rebuilds dist/ that the e2e test runs.
    fileParallelism: false,
  },
});
