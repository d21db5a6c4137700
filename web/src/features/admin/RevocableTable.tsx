import type { ReactNode } from 'react';
import { Button } from '../../components/Button.tsx';

export interface RevocableColumn<T> {
  header: string;
  cell: (item: T) => ReactNode;
}

/**
 * A list of things that can each be taken back (IP bans, Admin API keys): `empty` when there is none, else a
 * table named `label` with one column per `columns` and, on each row, a button named by `actionLabel(item)`
 * (the row's own name, so each button says which thing it revokes). Buttons wait while `busy`.
 */
export function RevocableTable<T>({
  label,
  items,
  empty,
  columns,
  rowKey,
  actionLabel,
  onAction,
  busy,
}: {
  label: string;
  items: T[] | null;
  empty: string;
  columns: RevocableColumn<T>[];
  rowKey: (item: T) => string;
  actionLabel: (item: T) => string;
  onAction: (item: T) => void;
  busy: boolean;
}) {
  if (!items) return null;
  if (items.length === 0) return <p>{empty}</p>;
  return (
    <table className="data" aria-label={label}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.header} scope="col">
              {column.header}
            </th>
          ))}
          <td />
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={rowKey(item)}>
            {columns.map((column) => (
              <td key={column.header}>{column.cell(item)}</td>
            ))}
            <td>
              <Button variant="secondary" disabled={busy} onClick={() => onAction(item)}>
                {actionLabel(item)}
              </Button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
