// Curation in the graph explorer (docs/curation.md): merge the selected nodes, rename
// and type an entity from the side panel, list the corpus's curation log and undo an
// operation. Every change is a call to the curation routes of the public API; the
// grapher applies it asynchronously, so the page says so and the log shows the state.
// The app's helpers come in as ui: { h, api, getJSON, corpusPath, errorBox }.

// post sends one curation operation and returns the entry the API answers.
async function post(ui, op) {
  const resp = await ui.api(ui.corpusPath('/curation'), {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(op),
  });
  return resp.json();
}

// describe says what an operation does, in a line.
export function describe(op) {
  const q = (s) => `“${s}”`;
  switch (op.action) {
    case 'merge': return `merge ${op.entities.map(q).join(', ')} into ${q(op.into)}`;
    case 'split': return `split ${q(op.entity)} off`;
    case 'rename': return `rename ${q(op.entity)} to ${q(op.name)}`;
    case 'set_type': return `type of ${q(op.entity)}: ${op.type}`;
    case 'pin': return `pin the description of ${q(op.entity)}`;
    case 'delete_relationship': return `delete ${q(op.source)} — ${q(op.target)}`;
    case 'add_relationship': return `add ${q(op.source)} → ${q(op.target)}`;
    case 'undo': return `undo ${op.undoes}`;
    default: return op.action;
  }
}

// curationBar is the explorer's curation toolbar: a Merge button for the selected
// nodes (the ones selected first are merged into the one selected last) and the log.
// attach(cy) follows a new graph's selection; refresh() reloads the log.
export function curationBar(ui) {
  const { h } = ui;
  let order = [];
  const note = h('span', { class: 'muted', id: 'curation-note' });
  const merge = h('button', { type: 'button', id: 'merge-nodes', disabled: true }, 'Merge');
  const list = h('ol', { id: 'curation-log', class: 'curation-log' });
  const log = h('details', { class: 'panel', id: 'curation' }, h('summary', {}, 'Curation'), list);
  const say = (...msg) => { note.replaceChildren(...msg); };
  const update = () => {
    merge.disabled = order.length < 2;
    merge.title = order.length < 2 ? 'Select two nodes (the second with Shift or Ctrl held)'
      : `Merge ${order.slice(0, -1).map((n) => n.data('name')).join(', ')} into ${order[order.length - 1].data('name')}`;
  };
  merge.addEventListener('click', async () => {
    if (order.length < 2) return;
    const into = order[order.length - 1].data('name');
    const entities = order.slice(0, -1).map((n) => n.data('name'));
    merge.disabled = true;
    try {
      const e = await post(ui, { action: 'merge', entities, into });
      say(`Merge accepted (${e.id}): the graph changes once the grapher has applied it.`);
      refresh();
    } catch (err) {
      say(ui.errorBox(err));
    }
    update();
  });
  async function refresh() {
    try {
      const r = await ui.getJSON(ui.corpusPath('/curation'));
      const ops = r.operations || [];
      list.replaceChildren(...(ops.length ? ops.slice().reverse().map((o) => h('li', { class: `curation-${o.state}`, dataset: { id: o.id } },
        h('span', {}, describe(o)), ' ', h('span', { class: 'muted' }, o.state + (o.reason ? `: ${o.reason}` : '')), ' ',
        o.state === 'undone' || o.action === 'undo' ? null
          : h('button', { type: 'button', class: 'undo', onclick: () => undo(o.id) }, 'Undo')))
        : [h('li', { class: 'muted' }, 'No curation yet.')]));
    } catch (err) {
      list.replaceChildren(h('li', {}, ui.errorBox(err)));
    }
  }
  async function undo(id) {
    try {
      await ui.api(ui.corpusPath(`/curation/${encodeURIComponent(id)}`), { method: 'DELETE' });
      say(`Undo of ${id} accepted.`);
    } catch (err) {
      say(ui.errorBox(err));
    }
    refresh();
  }
  log.addEventListener('toggle', () => { if (log.open) refresh(); });
  const attach = (cy) => {
    order = [];
    update();
    cy.on('select', 'node', (ev) => { order = order.filter((n) => n.id() !== ev.target.id()); order.push(ev.target); update(); });
    cy.on('unselect', 'node', (ev) => { order = order.filter((n) => n.id() !== ev.target.id()); update(); });
  };
  return { el: h('div', { class: 'row curation-bar' }, merge, note), log, attach, refresh };
}

// entityEditor is the side panel's form for an entity's name and type: a changed name
// is a rename, a changed type a set_type.
export function entityEditor(ui, d, onDone) {
  const { h } = ui;
  const name = h('input', { id: 'edit-name', value: d.name, 'aria-label': 'name' });
  const type = h('input', { id: 'edit-type', value: d.type || '', 'aria-label': 'type' });
  const out = h('span', { class: 'muted' });
  const form = h('form', { class: 'row entity-editor', onsubmit: async (ev) => {
    ev.preventDefault();
    const ops = [];
    if (name.value.trim() && name.value.trim() !== d.name) ops.push({ action: 'rename', entity: d.name, name: name.value.trim() });
    if (type.value.trim() && type.value.trim() !== (d.type || '')) ops.push({ action: 'set_type', entity: d.name, type: type.value.trim() });
    if (!ops.length) { out.replaceChildren('Nothing changed.'); return; }
    try {
      // The type first: a rename moves the entity to its new name.
      for (const op of ops.reverse()) await post(ui, op);
      out.replaceChildren('Saved: the graph changes once the grapher has applied it.');
      onDone?.();
    } catch (err) {
      out.replaceChildren(ui.errorBox(err));
    }
  } }, name, type, h('button', { type: 'submit' }, 'Save'), out);
  return h('details', { class: 'edit-entity' }, h('summary', {}, 'Edit name and type'), form);
}
