import { loadCatalog } from '../config/default-catalog.js';
import { priceReport, priceReportText } from '../config/price-report.js';

/**
 * `switchyard prices`: the catalog the gateway would load (`configPath`, else the built-in local
 * models), each deployment's effective prices and their source, as text or JSON. No database and
 * no provider keys are needed.
 */
export function printPrices(configPath: string | undefined, json: boolean): number {
  const catalog = loadCatalog(configPath, { providerKeys: 'optional' });
  const rows = priceReport(catalog);
  process.stdout.write(json ? `${JSON.stringify(rows, null, 2)}\n` : priceReportText(rows));
  return 0;
}
