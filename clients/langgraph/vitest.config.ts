import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true, // LangGraph's validation suite calls describe/it/expect as globals
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
