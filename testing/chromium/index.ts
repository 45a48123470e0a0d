// The tests' headless Chromium: Debian's package driven by playwright-core (which must never
// download a browser of its own). Without it a test is skipped — and fails under CI=true.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (apt-get install chromium). */
export const chromiumPath = "/usr/bin/chromium";

/** Why a browser test cannot run here. */
export const chromiumMissing = `${chromiumPath} is missing: skipping the browser test (apt-get install chromium)`;

/**
 * The `skip` option of a browser test: the reason when Chromium is missing outside CI, else
 * false — under CI=true the test runs and fails in launchChromium.
 */
export function chromiumSkip(): string | false {
  return !existsSync(chromiumPath) && process.env.CI !== "true" ? chromiumMissing : false;
}

/** Starts headless Chromium; throws (naming the package to install) when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumMissing} — and CI=true, where the browser tests must run`);
  return chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
}
