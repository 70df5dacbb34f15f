// cardarena's pages: the replay viewer and the report's game filter.
// The viewer re-implements no rule: it draws the states the engine computed (every seat's view
// at every step), which the page carries as base64 of gzipped JSON. Every text from the data is
// set with textContent, never parsed as HTML.
"use strict";
(() => {
  // ------------------------------------------------------------------ small DOM helpers
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, ...children) {
    for (const child of children) {
      if (child === null || child === undefined) continue;
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }

  // ------------------------------------------------------------------ cards
  const FRENCH_SUITS = { C: ["♣", "black", "clubs"], D: ["♦", "red", "diamonds"],
                         H: ["♥", "red", "hearts"], S: ["♠", "black", "spades"] };
  const SPANISH_SUITS = { o: ["◉", "gold", "oros (coins)"], c: ["Ʊ", "red", "copas (cups)"],
                          e: ["⚔", "blue", "espadas (swords)"], b: ["♣", "green", "bastos (batons)"] };
  const SPANISH_RANKS = { A: "ace", 3: "three", 4: "four", 5: "five", J: "jack", H: "horse", K: "king" };
  const DECKS = {
    french: {
      parse(name) {
        const m = /^(A|[2-9]|10|J|Q|K)([CDHS])$/.exec(name);
        if (!m) return null;
        const [symbol, colour, suit] = FRENCH_SUITS[m[2]];
        return { rank: m[1], symbol, colour, title: `${m[1]} of ${suit}` };
      },
      legend: "Suits: ♠ spades, ♥ hearts, ♦ diamonds, ♣ clubs. A striped card is face down.",
    },
    spanish: {
      parse(name) {
        const m = /^([A345JHK])([oceb])$/.exec(name);
        if (!m) return null;
        const [symbol, colour, suit] = SPANISH_SUITS[m[2]];
        return { rank: m[1], symbol, colour, title: `${SPANISH_RANKS[m[1]]} of ${suit}` };
      },
      legend: "Spanish suits: ◉ oros (coins, gold), Ʊ copas (cups, red), ⚔ espadas (swords, blue), " +
              "♣ bastos (batons, green). Ranks A 3 4 5 J (jack) H (horse) K (king). A striped card is face down.",
    },
    quitli: {
      parse(name) {
        const m = /^Q(1[0-2]|[1-9])$/.exec(name);
        if (!m) return null;
        const framed = m[1] === "2" || m[1] === "11";
        return { rank: m[1], symbol: "", colour: framed ? "framed" : "plain", title: `Quitli ${m[1]}` };
      },
      legend: "Quitli cards 1 to 12, two of each; the framed 2 and 11 are outlined. A striped card is face down.",
    },
  };

  function isCard(deck, value) { return typeof value === "string" && DECKS[deck].parse(value) !== null; }
  function cardText(deck, name) {
    const card = DECKS[deck].parse(name);
    return card ? card.rank + card.symbol : String(name);
  }
  function cardEl(deck, name) {
    if (name === null || name === undefined) {
      const back = el("span", "card back");
      back.title = "face down";
      return back;
    }
    const card = DECKS[deck].parse(name);
    if (!card) return el("span", "card", name);
    const node = el("span", `card ${card.colour}`, card.rank + card.symbol);
    node.title = card.title;
    return node;
  }
  function cardsEl(deck, cards, label) {
    const row = el("span", "cards");
    if (label) add(row, el("span", "label", label));
    if (!cards || cards.length === 0) add(row, el("span", "empty", "none"));
    else for (const card of cards) add(row, cardEl(deck, card));
    return row;
  }
  const hidden = (count) => Array.from({ length: Math.max(0, count || 0) }, () => null);

  // A one-line rendering of an action or event in card notation: "discard 3♠ · value 8".
  function describe(deck, data, names) {
    if (data === null || typeof data !== "object") return String(data);
    const parts = data.type === undefined ? [] : [String(data.type)];
    for (const [key, value] of Object.entries(data)) {
      if (key === "type" || key === "seat") continue;
      parts.push(key === "card" && isCard(deck, value) ? cardText(deck, value) : `${key} ${shown(deck, value, key, names)}`);
    }
    return data.type === undefined ? parts.join(" · ") : parts.join(" · ").replace(" · ", " ");
  }
  function shown(deck, value, key, names) {
    if (value === null || value === undefined) return "none";
    if (isCard(deck, value)) return cardText(deck, value);
    if (Array.isArray(value)) {
      if (value.every((v) => isCard(deck, v) || v === null)) return value.map((v) => (v === null ? "▒" : cardText(deck, v))).join(" ") || "none";
      return value.map((v) => shown(deck, v, key, names)).join(", ");
    }
    if (typeof value === "object") return "{" + Object.entries(value).map(([k, v]) => `${k} ${shown(deck, v, k, names)}`).join(", ") + "}";
    if (typeof value === "number" && names && /^(seat|winner|knocker|banker|owner|last_capturer|dealer)$/.test(key) && names[value] !== undefined) {
      return `${names[value]} (seat ${value})`;
    }
    return String(value);
  }
  function scoreText(score) {
    return Array.isArray(score) ? (score[0] / score[1]).toFixed(2) : String(score);
  }

  // ------------------------------------------------------------------ one adapter per game
  // hand(view, seat): the cards of `seat` as `view` shows them (null: face down);
  // groups(view, seat): laid-out groups (secrets); info(view, seat): one line about the seat;
  // centre(view): the table; reveal(reveal): what everyone sees at the end.
  function line(...parts) { return el("div", "line", parts.filter((p) => p !== "" && p !== null).join(" · ")); }
  function pile(deck, cards, label, shownCount) {
    const list = cards || [];
    const start = Math.max(0, list.length - shownCount);
    const row = cardsEl(deck, list.slice(start), label);
    if (start > 0) row.insertBefore(el("span", "small", `${start} below, `), row.children[1]);
    return row;
  }
  function perSeatTable(headers, rows) {
    const table = el("table", "reveal-table");
    const head = add(el("tr"), ...headers.map((h) => el("th", "", h)));
    add(table, add(el("thead"), head));
    const body = el("tbody");
    for (const cells of rows) add(body, add(el("tr"), ...cells.map((c) => (c instanceof Node ? add(el("td"), c) : el("td", "", c)))));
    return add(table, body);
  }

  const GAMES = {
    casino: {
      deck: "french",
      hand: (v, s) => (s === v.seat ? v.hand : hidden(v.players[s].hand_size)),
      info: (v, s) => { const p = v.players[s]; return [`captured ${p.captured} (${p.spades} ♠)`, `sweeps ${p.sweeps}`, `score ${p.score}`, v.dealer === s ? "dealer" : ""]; },
      centre(v, names) {
        const box = el("div");
        add(box, line(`round ${v.round}`, `stock ${v.stock}`, `target ${v.target}`, v.last ? "last deal" : "",
                      v.last_capturer === null ? "" : `last capture: ${names[v.last_capturer]}`));
        add(box, add(el("div", "line"), cardsEl("french", v.table.loose, "loose")));
        for (const build of v.table.builds) {
          add(box, add(el("div", "line build"), cardsEl("french", build.cards,
            `build #${build.id} of ${build.value} (${build.kind}, ${names[build.owner] ?? "seat " + build.owner})`)));
        }
        if (v.move) add(box, el("div", "line move", "move in progress: " + describe("french", v.move, names)));
        return box;
      },
      reveal(r, names) {
        const box = el("div");
        for (const round of r.rounds) {
          add(box, el("h4", "", `round ${round.round}`));
          add(box, perSeatTable(["seat", "cards", "spades", "aces", "big casino", "little casino", "sweeps", "points"],
            round.points.map((p, s) => [names[s], p.cards, p.spades, p.aces, p.big_casino, p.little_casino, p.sweeps, p.points])));
        }
        add(box, el("h4", "", "capture piles"));
        r.captured.forEach((cards, s) => add(box, add(el("div", "line"), cardsEl("french", cards, names[s]))));
        return box;
      },
    },
    "knock-rummy": {
      deck: "french",
      hand(v, s) {
        if (s === v.seat) return v.hand;
        const known = v.known_cards[s] || [];
        return known.concat(hidden(v.hand_sizes[s] - known.length));
      },
      info: (v, s) => [`${v.hand_sizes[s]} cards`, v.dealer === s ? "dealer" : "", v.knocker === s ? "knocked" : "",
                       s === v.seat && v.knock_card ? `knock card ${cardText("french", v.knock_card)}` : ""],
      centre(v) {
        const box = el("div");
        add(box, line(`phase ${v.phase}`, `turn ${v.turn_number} of at most ${v.max_turns}`, `stock ${v.stock}`,
                      v.pickups_left === null ? "" : `pick-ups left ${v.pickups_left}`));
        add(box, add(el("div", "line"), pile("french", v.discard_pile, "discard pile (top last)", 12)));
        return box;
      },
      reveal(r, names) {
        const box = el("div");
        add(box, line(`ending ${r.ending}`, r.knocker === null ? "" : `knocker ${names[r.knocker]}`,
                      r.knock_card ? `knock card ${cardText("french", r.knock_card)}` : ""));
        add(box, perSeatTable(["seat", "melds", "deadwood cards", "deadwood", "payment"], names.map((name, s) => {
          const melds = el("span");
          for (const meld of r.melds[s]) add(melds, cardsEl("french", meld), " ");
          if (r.melds[s].length === 0) add(melds, "none");
          return [name, melds, cardsEl("french", r.deadwood_cards[s]), r.deadwood[s], r.payments[s]];
        })));
        return box;
      },
    },
    cuajo: {
      deck: "spanish",
      hand: (v, s) => (s === v.seat ? v.hand : hidden(v.hand_sizes[s])),
      groups: (v, s) => (s === v.seat ? v.secrets : Array.from({ length: v.secret_counts[s] }, () => hidden(4))),
      info: (v, s) => [`partners ${s % 2 === 0 ? "0+2" : "1+3"}`, `${v.hand_sizes[s]} in hand`, v.dealer === s ? "dealer" : "",
                       v.turn === s && v.phase !== "over" ? "their turn" : "", v.purro[s] ? "PURRO" : "",
                       v.penalty[s] ? `penalty ${v.penalty[s]}` : ""],
      centre(v) {
        const box = el("div");
        add(box, line(`phase ${v.phase}`, `turn ${v.turn_number} of at most ${v.max_turns}`, `stock ${v.stock}`,
                      `balance (cents): seats 0+2 ${v.balance[0]}, seats 1+3 ${v.balance[1]}`));
        add(box, add(el("div", "line"), cardsEl("spanish", [v.sowee], "sowee"),
                     v.shown ? cardsEl("spanish", [v.shown], "shown stock card") : null));
        add(box, add(el("div", "line"), pile("spanish", v.discards, "discard pile (top last)", 12)));
        return box;
      },
      reveal(r, names) {
        const box = el("div");
        add(box, line(`outcome: ${describe("spanish", r.outcome, names)}`, `balance ${r.balance.join(" / ")}`,
                      `next dealer ${names[r.next_dealer]}`, `${r.stock.length} cards left in the stock`));
        add(box, perSeatTable(["seat", "hand", "secrets"], names.map((name, s) => {
          const secrets = el("span");
          for (const secret of r.secrets[s]) add(secrets, cardsEl("spanish", secret), " ");
          if (r.secrets[s].length === 0) add(secrets, "none");
          return [name, cardsEl("spanish", r.hands[s]), secrets];
        })));
        return box;
      },
    },
    quitlok: {
      deck: "quitli",
      hand: (v, s) => v.hands[s],
      info: (v, s) => [`stack ${v.stacks[s]}`, v.bets[s] ? `bet ${v.bets[s]}` : "", v.status[s],
                       s === v.seat && v.total !== null ? `total ${v.total}` : "", v.eleven_called[s] ? "called eleven" : ""],
      centre(v, names) {
        const box = el("div");
        add(box, line(`phase ${v.phase}`, v.banker === null ? "no banker" : `banker ${names[v.banker]}`,
                      `bank ${v.bank}`, `cover ${v.cover}`, `hand ${v.hand_number}`, v.direction,
                      `banks held ${v.banks_held}`, `deck ${v.deck_size}`));
        if (v.turn_order.length) add(box, line("turn order: " + v.turn_order.map((s) => names[s]).join(", ")));
        add(box, add(el("div", "line"), cardsEl("quitli", v.discards_seen, "discards seen"),
                     el("span", "small", ` and ${v.discards_unseen} unseen`)));
        return box;
      },
      reveal: (r, names) => perSeatTable(["seat", "stack", "net"], names.map((name, s) => [name, r.stacks[s], r.net[s]])),
    },
  };

  // ------------------------------------------------------------------ the viewer
  async function unpack(base64) {
    const bytes = Uint8Array.from(atob(base64.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function fullViews(frames, players) {
    const views = [];
    let current = frames[0].views;
    views.push(current);
    for (const frame of frames.slice(1)) {
      current = current.map((view, s) => Object.assign({}, view, frame.views[s]));
      views.push(current);
    }
    return views;
  }

  function buildViewer(root, data) {
    const adapter = GAMES[data.game];
    if (!adapter) throw new Error(`no viewer for the game ${data.game}`);
    const deck = adapter.deck;
    const names = data.seats;
    const players = names.length;
    const frames = data.frames;
    const last = frames.length - 1;
    const views = fullViews(frames, players);
    // the step at which each seat first faulted (its moves from then on are the fallback's)
    const faultedAt = {};
    for (const f of data.faults) {
      if (typeof f.seat === "number") faultedAt[f.seat] = Math.min(f.decision ?? 0, faultedAt[f.seat] ?? Infinity);
    }
    let step = 0, mode = "all", timer = null;

    const title = el("h1", "", `${data.title}: ${data.game_id}`);
    const meta = el("p", "meta", `seed ${data.seed} · rules v${data.rules_version} · options ` +
      Object.entries(data.options).map(([k, v]) => `${k}=${v}`).join(", "));
    const controls = el("div", "controls");
    const button = (id, text, label) => { const b = el("button", "", text); b.id = id; b.type = "button"; b.title = label; return b; };
    const first = button("first", "⇤ start", "first step (Home)"), back = button("back", "◀ back", "step back (←)");
    const play = button("play", "▶ play", "play / pause (space)"), next = button("next", "step ▶", "step forward (→)");
    const end = button("last", "end ⇥", "last step (End)");
    const slider = el("input"); slider.type = "range"; slider.id = "slider"; slider.min = "0"; slider.max = String(last); slider.value = "0";
    slider.setAttribute("aria-label", "step");
    const label = el("span", "step-label"); label.id = "step-label";
    const select = el("select"); select.id = "view-mode"; select.setAttribute("aria-label", "whose view");
    add(select, Object.assign(el("option", "", "everything (every hand)"), { value: "all" }));
    names.forEach((name, s) => add(select, Object.assign(el("option", "", `as seat ${s} (${name}) saw it`), { value: String(s) })));
    add(controls, first, back, play, next, end, slider, label, select);

    const seatsBox = el("div", "seats"), centreBox = el("div", "centre"), eventBox = el("div", "event"); eventBox.id = "event";
    const resultBox = el("section", "result"); resultBox.id = "result";
    const logBox = el("ol", "log"); logBox.id = "log"; logBox.start = 0;
    const legend = el("p", "legend", DECKS[deck].legend + " Keys: ← → step, Home/End, space plays.");
    add(root, title, meta, controls, add(el("div", "felt"), centreBox, seatsBox), eventBox, resultBox,
        add(el("details", "log-box"), el("summary", "", "every step"), logBox), legend);
    if (data.faults.length) {
      const list = el("ul", "faults");
      for (const f of data.faults) add(list, el("li", "fault", `FAULT ${f.bot} (seat ${f.seat}) ${f.kind} at decision ${f.decision ?? "start"}: ${f.detail}`));
      root.insertBefore(list, controls);
    }

    // result table (shown at the last step)
    const teams = data.teams;
    add(resultBox, el("h2", "", "Result"));
    const resultTable = perSeatTable(["seat", "bot", "score", "rank"], names.map((name, s) => [
      `${s}${teams ? " (team " + teams[s] + ")" : ""}`, name, scoreText(data.result.scores[s]), data.result.ranks[s] + 1]));
    resultTable.id = "final-scores";
    Array.from(resultTable.tBodies[0].rows).forEach((row, s) => { row.dataset.seat = String(s); row.cells[2].className = "score"; row.cells[3].className = "rank"; });
    add(resultBox, resultTable, el("h3", "", "Revealed at the end"), adapter.reveal(data.reveal, names));

    // the log of every step
    frames.forEach((frame, k) => {
      const item = el("li", "", k === 0 ? "the deal" : `${names[frame.seat]}: ${describe(deck, frame.action, names)}` +
        (frame.fallback ? " (fallback)" : "") + (frame.faults ? " FAULT" : ""));
      item.dataset.step = String(k);
      item.addEventListener("click", () => show(k));
      add(logBox, item);
    });

    function seatPanel(s, view, k) {
      const panel = el("div", "seat");
      panel.dataset.seat = String(s);
      if (view.to_move === s) panel.classList.add("to-move");
      if (k > 0 && frames[k].seat === s) panel.classList.add("acted");
      const head = el("div", "seat-head");
      add(head, el("b", "", names[s]), el("span", "small", ` seat ${s}${teams ? ", team " + teams[s] : ""}`));
      if (faultedAt[s] !== undefined && k >= faultedAt[s]) add(head, el("span", "badge fault", "faulted: fallback moves"));
      if (view.to_move === s) add(head, el("span", "badge", "to move"));
      add(panel, head, el("div", "small", adapter.info(view, s).filter(Boolean).join(" · ")));
      add(panel, cardsEl(deck, adapter.hand(view, s)));
      if (adapter.groups) for (const group of adapter.groups(view, s)) add(panel, cardsEl(deck, group, "secret"));
      return panel;
    }

    function show(k) {
      step = Math.max(0, Math.min(last, k));
      const seen = mode === "all" ? null : Number(mode);
      const frameViews = views[step];
      seatsBox.replaceChildren(...names.map((_, s) => seatPanel(s, frameViews[seen === null ? s : seen], step)));
      centreBox.replaceChildren(adapter.centre(frameViews[seen === null ? 0 : seen], names));
      const frame = frames[step];
      eventBox.replaceChildren();
      if (step === 0) {
        add(eventBox, el("div", "what", "The deal."));
      } else {
        const actor = `${names[frame.seat]} (seat ${frame.seat})`;
        const own = seen === null || seen === frame.seat;
        add(eventBox, el("div", "what" + (frame.fallback ? " fallback" : ""), own
          ? `${actor} chose: ${describe(deck, frame.action, names)}${frame.fallback ? " — a fallback move: the referee played it for a faulted bot" : ""}`
          : `${actor} moved${frame.fallback ? " (a fallback move for a faulted bot)" : ""}; seat ${seen} sees only the events:`));
        for (const f of frame.faults || []) add(eventBox, el("div", "fault", `FAULT ${f.bot}: ${f.kind}: ${f.detail}`));
        const events = el("ul", "events");
        for (const event of frame.events) add(events, el("li", "", (event.seat !== undefined ? `${names[event.seat] ?? event.seat}: ` : "") + describe(deck, event, names)));
        if (!frame.events.length) add(events, el("li", "small", "no public event (a step of a move still in progress)"));
        add(eventBox, events);
      }
      resultBox.hidden = step !== last;
      slider.value = String(step);
      label.textContent = `step ${step} of ${last}`;
      for (const item of logBox.children) item.classList.toggle("current", Number(item.dataset.step) === step);
      back.disabled = first.disabled = step === 0;
      next.disabled = end.disabled = step === last;
      if (step === last) stop();
    }
    function stop() { if (timer !== null) { clearInterval(timer); timer = null; play.textContent = "▶ play"; } }
    function toggle() {
      if (timer !== null) return stop();
      if (step === last) show(0);
      play.textContent = "❚❚ pause";
      timer = setInterval(() => show(step + 1), 500);
    }
    first.addEventListener("click", () => { stop(); show(0); });
    back.addEventListener("click", () => { stop(); show(step - 1); });
    next.addEventListener("click", () => { stop(); show(step + 1); });
    end.addEventListener("click", () => { stop(); show(last); });
    play.addEventListener("click", toggle);
    slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
    select.addEventListener("change", () => { mode = select.value; show(step); });
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
      if (event.target instanceof HTMLSelectElement) return;
      const keys = { ArrowRight: () => show(step + 1), ArrowLeft: () => show(step - 1), Home: () => show(0), End: () => show(last), " ": toggle };
      if (keys[event.key]) { event.preventDefault(); if (event.key !== " ") stop(); keys[event.key](); }
    });
    show(0);
    root.dataset.ready = "true";
  }

  async function startViewer() {
    const root = document.getElementById("replay");
    const source = document.getElementById("replay-data");
    if (!root || !source) return;
    try {
      buildViewer(root, await unpack(source.textContent));
    } catch (error) {
      add(root, el("p", "fault", `This replay cannot be shown: ${error}`));
      console.error(error);
    }
  }

  // ------------------------------------------------------------------ the report's game list
  function startGameFilter() {
    const input = document.getElementById("game-filter");
    const table = document.getElementById("games");
    if (!input || !table) return;
    const rows = Array.from(table.tBodies[0].rows);
    const count = document.getElementById("game-count");
    const texts = rows.map((row) => row.textContent.toLowerCase());
    const apply = () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let visible = 0;
      rows.forEach((row, i) => { const on = words.every((w) => texts[i].includes(w)); row.hidden = !on; visible += on; });
      count.textContent = `${visible} of ${rows.length} games`;
    };
    input.addEventListener("input", apply);
    apply();
  }

  startViewer();
  startGameFilter();
})();
