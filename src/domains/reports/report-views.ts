import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import type { ReportCategory, ReportRow, ReportSnapshot, ReportStatus, ReportTargetType } from './report-store.ts';

/** A report as its reporter sees it (`reporterReportView`). */
export type ReporterReportView = {
  id: string;
  target_type: ReportTargetType;
  target_id: string;
  channel_id: string | null;
  guild_id: string | null;
  category: ReportCategory;
  description: string | null;
  status: ReportStatus;
  created_at: string | null;
};

/** A report as the Admin API shows it (`adminReportView`). */
export type AdminReportView = ReporterReportView & {
  reporter_id: string;
  reporter: PartialUser | null;
  snapshot: ReportSnapshot;
  closed_at: string | null;
  closed_by: string | null;
  resolution_note: string | null;
};

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * What the reporter gets back when filing: their own report, without the evidence snapshot and without
 * anything an admin wrote (reporters never see the review).
 */
export function reporterReportView(row: ReportRow): ReporterReportView {
  return {
    id: row.id,
    target_type: row.target_type,
    target_id: row.target_id,
    channel_id: row.channel_id,
    guild_id: row.guild_id,
    category: row.category,
    description: row.description,
    status: row.status,
    created_at: iso(row.created_at),
  };
}

/** The Admin API's report: the reporter, the snapshot taken at filing time, and the review. */
export function adminReportView(row: ReportRow, reporter: UserRecord | undefined): AdminReportView {
  return {
    ...reporterReportView(row),
    reporter_id: row.reporter_id,
    reporter: reporter ? partialUser(reporter) : null,
    snapshot: row.snapshot,
    closed_at: iso(row.closed_at),
    closed_by: row.closed_by,
    resolution_note: row.resolution_note,
  };
}
