// Photographs a Superset dashboard with Debian's chromium, driven by playwright-core:
//
//   node screenshot.mjs --url http://127.0.0.1:8088 --dashboard haade-lakehouse --out docs/superset.png
//
// It logs in through Superset's own form, opens the dashboard, waits until every chart has drawn,
// and exits non-zero on a page error, a chart that failed or came back empty, or a dashboard with
// fewer charts than --charts. It prints one JSON line: the charts it saw and how long it took.
import { chromium } from "playwright-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const url = (args.url || "http://127.0.0.1:8088").replace(/\/$/, "");
const user = args.user || process.env.HAADE_SUPERSET_USER || "admin";
const password = args.password || process.env.HAADE_SUPERSET_PASSWORD || "admin";
const slug = args.dashboard || "haade-lakehouse";
const out = args.out || "superset.png";
const want = Number(args.charts || 5);
const chromePath = args.chromium || process.env.CHROMIUM || "/usr/bin/chromium";
const timeout = Number(args.timeout || 120) * 1000;

const fail = (msg) => {
  console.error(`screenshot: ${msg}`);
  process.exitCode = 1;
};

const t0 = Date.now();
const errors = [];
const browser = await chromium.launch({
  executablePath: chromePath,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
  ],
});
try {
  // playwright-core gives each context a fresh profile (its own --user-data-dir).
  const ctx = await browser.newContext({ viewport: { width: 1600, height: 1150 }, deviceScaleFactor: 1, timezoneId: "UTC" });
  const page = await ctx.newPage();
  page.setDefaultTimeout(timeout);
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("response", (r) => {
    if (r.url().includes("/api/v1/chart/data") && r.status() >= 400) errors.push(`chart data: HTTP ${r.status()} ${r.url()}`);
  });
  await page.goto(`${url}/login/`);
  await page.fill("input[name=username], #username", user);
  await page.fill("input[name=password], #password", password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login"), { timeout }), page.keyboard.press("Enter")]);
  await page.goto(`${url}/superset/dashboard/${slug}/?standalone=1`);
  const holders = page.locator(".dashboard-component-chart-holder");
  await holders.first().waitFor();
  // Every chart: drawn (an ECharts canvas or a table row) or failed (an alert or the empty state).
  const deadline = Date.now() + timeout;
  let state;
  for (;;) {
    state = await page.evaluate(() =>
      [...document.querySelectorAll(".dashboard-component-chart-holder")].map((h) => ({
        title: (h.querySelector(".header-title, [data-test=editable-title], .editable-title") || {}).textContent || "",
        drawn: !!h.querySelector("canvas, svg.echarts, table tbody tr, .echarts-for-react"),
        loading: !!h.querySelector(".loading, [aria-label=loading], .ant-skeleton"),
        empty: /No results were returned|No data/i.test(h.innerText),
        error: !!h.querySelector(".alert-danger, [role=alert].ant-alert-error, .error-alert") || /Unexpected error|Error:/i.test(h.innerText),
      })),
    );
    const settled = state.length >= want && state.every((c) => !c.loading && (c.drawn || c.empty || c.error));
    if (settled || Date.now() > deadline) break;
    await page.waitForTimeout(500);
  }
  // ECharts animates for a moment after drawing.
  await page.waitForTimeout(1500);
  await page.screenshot({ path: out, fullPage: true });
  if (state.length < want) fail(`${state.length} charts on the dashboard, want ${want}`);
  for (const c of state) {
    if (c.error) fail(`chart "${c.title.trim()}" failed`);
    else if (c.empty) fail(`chart "${c.title.trim()}" is empty`);
    else if (!c.drawn) fail(`chart "${c.title.trim()}" did not draw within ${timeout / 1000}s`);
  }
  for (const e of errors) fail(e);
  console.log(JSON.stringify({ charts: state, seconds: (Date.now() - t0) / 1000, out }));
} finally {
  await browser.close();
}
