CREATE TABLE "adn_parameters_cache" (
	"ambiente" integer NOT NULL,
	"path" text NOT NULL,
	"status" integer NOT NULL,
	"body" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	CONSTRAINT "adn_parameters_cache_ambiente_path_pk" PRIMARY KEY("ambiente","path")
);
--> statement-breakpoint
CREATE TABLE "municipal_breakdown_texts" (
	"ambiente" integer NOT NULL,
	"municipio" text NOT NULL,
	"c_trib_nac" text NOT NULL,
	"c_trib_mun" text NOT NULL,
	"descricao" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	CONSTRAINT "municipal_breakdown_texts_ambiente_municipio_c_trib_nac_c_trib_mun_pk" PRIMARY KEY("ambiente","municipio","c_trib_nac","c_trib_mun")
);
--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "warnings" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "documents_error_code" text;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "storage_base_url_reason" text;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "storage_base_url_checked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "storage_base_url_active" text;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "key_rate_limit_ceiling" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "key_rate_limit_ceiling" integer;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "attempt_started_at" timestamp with time zone;--> statement-breakpoint
-- Key rate ceilings per plan (issue 9); NFSE_MAX_KEY_RATE_LIMIT caps them all.
UPDATE "plans" SET "key_rate_limit_ceiling" = CASE "slug" WHEN 'free' THEN 60 WHEN 'dev' THEN 300 WHEN 'pro' THEN 1200 WHEN 'enterprise' THEN 6000 END WHERE "slug" IN ('free', 'dev', 'pro', 'enterprise');--> statement-breakpoint
-- Domains already set were never verified: they keep their status and are checked by the verification job.
UPDATE "organizations" SET "storage_base_url_status" = 'pending_verification' WHERE "storage_base_url" IS NOT NULL AND "storage_base_url_status" IS NULL;
