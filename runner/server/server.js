// The league server's pages: the live leaderboard (polled as JSON, drawn with textContent only, so
// no bot-supplied name can become markup) and a check report that reloads itself until it is done.
"use strict";
(function () {
  const POLL_MS = 3000;

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function table(headers, rows) {
    const t = el("table", null, "board");
    const head = el("tr");
    headers.forEach(h => head.appendChild(el("th", h)));
    t.appendChild(head);
    rows.forEach(cells => {
      const tr = el("tr");
      cells.forEach(([value, num, href]) => {
        const cell = el("td", href ? null : value, num ? "num" : "");
        if (href) {
          const link = el("a", value);
          link.href = href;
          cell.appendChild(link);
        }
        tr.appendChild(cell);
      });
      t.appendChild(tr);
    });
    return t;
  }

  function drawBoards(data) {
    const boards = document.getElementById("boards");
    const status = document.getElementById("board-status");
    const recent = document.getElementById("recent");
    status.textContent = `${data.games} games played` + (data.paused ? " (play is paused)" : "") +
      ` — updated ${new Date().toLocaleTimeString()}`;
    const fresh = document.createDocumentFragment();
    if (!data.boards.length) fresh.appendChild(el("p", data.note || "no games yet: the board fills as games finish"));
    data.boards.forEach(board => {
      fresh.appendChild(el("h2", board.title));
      fresh.appendChild(table(["#", "bot", "Elo", "95% interval", "games", "score %", "W-D-L", "faults"],
        board.rows.map(r => [[r.rank, true], [r.bot, false, "/bots/" + encodeURIComponent(r.bot)], [Math.round(r.elo), true], [r.interval, true],
          [r.games, true], [r.score_percent.toFixed(1), true], [`${r.wins}-${r.draws}-${r.losses}`, true],
          [r.faults, true]])));
      board.notes.forEach(note => fresh.appendChild(el("p", note, "note")));
    });
    boards.replaceChildren(fresh);
    const games = document.createDocumentFragment();
    const list = el("ul");
    data.recent.forEach(g => {
      const item = el("li");
      const link = el("a", g.game_id);
      link.href = "/games/" + g.game_id.split("/").map(encodeURIComponent).join("/");
      item.appendChild(link);
      item.appendChild(document.createTextNode(` ranks ${g.ranks.join(", ")}` + (g.faults ? `, ${g.faults} fault(s)` : "")));
      list.appendChild(item);
    });
    games.appendChild(list);
    recent.replaceChildren(games);
  }

  async function poll() {
    try {
      const answer = await fetch("/api/leaderboard", {credentials: "same-origin", cache: "no-store"});
      if (answer.ok) drawBoards(await answer.json());
    } catch (error) {
      document.getElementById("board-status").textContent = "the server did not answer; trying again";
    }
    setTimeout(poll, POLL_MS);
  }

  if (document.getElementById("boards")) poll();
  const report = document.getElementById("check-report");
  if (report && report.dataset.status === "checking") setTimeout(() => location.reload(), 2000);
})();
