// Widget "drafters-published": the table of published results. Every number in it is either quoted from a paper
// (cited on the page) or computed by Python: the tokens per target pass that Eq. 1 of Leviathan et al. (2023)
// predicts from a reported α (web/drafters.py, drafters.published). The build paints it; once Python is up the
// same handler answers live (no controls, so once).

import { define } from "../ui/widget.js";
import { el, scroller } from "../ui/controls.js";

const SOURCES = {
  "lev-t2": "Leviathan et al. 2023, Table 2",
  "lev-t3": "Leviathan et al. 2023, Table 3",
  medusa: "Cai et al. 2024",
  eagle: "Li et al. 2024a (EAGLE)",
  eagle2: "Li et al. 2024b (EAGLE-2)",
  eagle3: "Li et al. 2025 (EAGLE-3)",
  la: "Fu et al. 2024",
  pld: "Saxena 2023",
};

export default define(import.meta.url, {
  controls: [],
  view(ctx) {
    const table = el("table", "sd-table sd-drafters-published");
    ctx.el.append(scroller("Published results", table));
    return {
      paint(result) {
        const g = result.symbol;
        table.innerHTML =
          `<caption>Reported figures as the papers give them; “Eq. 1” is (1 − α<sup>${g}+1</sup>) / (1 − α), computed here from the reported α (${g} from the paper, or ${g} = ${result.gamma_default} marked *); a dash: the row quotes a speedup and no α, so there is nothing to compute from.</caption>` +
          `<thead><tr><th scope="col">Method and source</th><th scope="col">Setting, and how it differs from this page</th><th scope="col">α</th><th scope="col">Eq. 1: tokens per pass</th><th scope="col">Reported speedup</th></tr></thead><tbody>` +
          result.rows
            .map((r) => {
              const predicted =
                r.predicted === null
                  ? "—"
                  : `${r.predicted.toFixed(2)}<small>${g} = ${r.gamma}${r.gamma_from_paper ? "" : "*"}</small>`;
              const alpha = r.alpha === null ? "—" : r.alpha.toFixed(2);
              return `<tr><th scope="row">${r.method}<small>${SOURCES[r.source] || r.source}</small></th><td>${r.setting}<small>${r.differs}</small></td><td>${alpha}</td><td>${predicted}</td><td>${r.reported}</td></tr>`;
            })
            .join("") +
          "</tbody>";
      },
    };
  },
});
