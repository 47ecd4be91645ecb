from services.archiver.service import run

run()
