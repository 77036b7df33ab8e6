import { z } from 'zod';

const MIB = 1024 * 1024;

/** How long the trash keeps deleted entries and how much it may hold (`trash:` of fs_write_policy.yaml). */
export const trashPolicySchema = z
  .strictObject({
    retention_days: z.number().min(0).max(3650).default(7).describe('Deleted entries are kept this many days (0: purged at the next delete)'),
    max_bytes: z.number().int().min(0).default(1024 * MIB).describe('The trash is purged oldest first beyond this size'),
  })
  .prefault({});

export type TrashPolicy = z.output<typeof trashPolicySchema>;
