import { enc, get } from '../api.js';
import { h, show, table, when } from '../dom.js';

/** The operator API's audit log, newest first, a page at a time. */
export async function auditPage(_ctx, cursor) {
  const page = await get(`/v2/admin/audit?limit=50${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  show(
    h('h1', {}, 'Audit log'),
    table(
      ['When', 'Key', 'Call', 'Targets', 'From', 'Status'],
      page.entries,
      (e) => [
        when(e.at),
        e.keyId ? `${e.keyId} (${e.keyKind})` : '—',
        `${e.method} ${e.route}`,
        Object.entries(e.targets ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(' '),
        e.clientAddress,
        String(e.status),
      ],
      { 'data-testid': 'audit' },
    ),
    page.next && h('button', { type: 'button', class: 'secondary', onclick: () => auditPage(_ctx, page.next) }, 'Older entries'),
  );
}
