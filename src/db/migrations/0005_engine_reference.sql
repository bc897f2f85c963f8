ALTER TABLE "invoices" RENAME COLUMN "n_dps" TO "declaration_number";--> statement-breakpoint
ALTER TABLE "invoices" RENAME COLUMN "dps_id" TO "declaration_id";--> statement-breakpoint
ALTER TABLE "invoices" RENAME COLUMN "dps_xml" TO "declaration_xml";--> statement-breakpoint
ALTER TABLE "invoices" RENAME COLUMN "ch_nfse" TO "access_key";--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "protocol" text;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "verification_code" text;
