// Moved to src/identity (the neutral identity module); this re-export goes once every branch has moved.
export * from '../../identity/user-record.ts';
