import { useState } from 'react';
import { GuildAdminApi } from '../../../api/guild-admin.ts';
import { useApp } from '../../../app-context.tsx';
import { PERMISSION_BITS, type PermissionName } from '../../../lib/permissions.ts';

export function bit(name: PermissionName): bigint {
  return 1n << PERMISSION_BITS[name];
}

export function useGuildAdmin(): GuildAdminApi {
  const { api } = useApp();
  const [admin] = useState(() => new GuildAdminApi(api.http));
  return admin;
}

/** One action at a time per form, its error kept for an `<ErrorNotice>`. */
export function useRun() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function readAsDataUri(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** `#rrggbb` ⇄ the integer the API keeps (0 = no colour). */
export function colorToHex(color: number): string {
  return `#${color.toString(16).padStart(6, '0')}`;
}
export function hexToColor(hex: string): number {
  return Number.parseInt(hex.slice(1), 16) || 0;
}
