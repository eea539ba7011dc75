export const DASHBOARD_UID: string;
export interface GrafanaTarget {
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat: string;
  readonly datasource: { type: string; uid: string };
}
export interface GrafanaPanel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly datasource?: { type: string; uid: string };
  readonly targets?: GrafanaTarget[];
}
export interface GrafanaDashboard {
  readonly uid: string;
  readonly title: string;
  readonly schemaVersion: number;
  readonly templating: { list: Array<{ name: string; type: string; query: string }> };
  readonly panels: GrafanaPanel[];
  readonly [k: string]: unknown;
}
export function dashboard(): GrafanaDashboard;
export function dashboardQueries(): Array<{ panel: string; expr: string }>;
