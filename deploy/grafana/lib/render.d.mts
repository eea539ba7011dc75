export function renderDashboard(): string;
