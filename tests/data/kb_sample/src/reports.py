"""Monthly revenue reports."""

from billing import Invoice, compute_total


class BaseReport:
    title = "report"

    def render(self) -> str:
        return self.title.upper()


class MonthlyReport(BaseReport):
    title = "monthly revenue"

    def summarize(self, invoices: list[Invoice]) -> str:
        revenue = sum(compute_total(invoice.items) for invoice in invoices)
        return f"{self.render()}: {revenue}"
